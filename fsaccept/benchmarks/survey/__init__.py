"""The target survey: each storage target measured alone from the clients (issue 52)."""
