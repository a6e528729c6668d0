"""The play and viewer pages of ``arena play`` and ``arena view`` (a local web server)."""
