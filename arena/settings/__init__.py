"""The settings layer: validated, frozen rules (:mod:`arena.settings.rules`)
and run configs (:mod:`arena.settings.config`), and the TOML formats of both.

The rules presets and example configs travel as package data in
``arena/presets/`` and ``arena/configs/``.
"""
