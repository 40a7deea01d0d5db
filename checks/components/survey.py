"""The target survey: each storage target (a GlusterFS brick) written alone from the
clients, one file placed on each, in rounds where a node writes one target and a server
serves one.  A target below (1 - max_spread) x the median target FAILs, named with its
server; a brick no file reached, or a target not measured, makes the test INVALID
(``reference/<system>.yaml``: ``tests.target_survey``; ``docs/user/components.md``).
"""

import reframe as rfm

from fsaccept.rfm.survey import SurveyTest
from fsaccept.rfm.targets import on_targets


@rfm.simple_test
@on_targets
class TargetSurvey(SurveyTest):
    """Each storage target alone, and the slow one named with its server."""
