"""The environments, one folder each. An env registers by its folder's `registration.py`
(see `core/registration.py`); nothing here lists them."""
