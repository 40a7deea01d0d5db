"""From ReFrame's run report and results database to what people read: the sign-off
report, the nightly trends and the assessment against hardware ceilings."""
