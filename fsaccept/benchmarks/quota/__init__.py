"""fsaccept's quota check: a quota the site's own commands set, enforced and reported."""
