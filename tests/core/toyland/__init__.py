"""An env package outside datagauntlet, for the toy env the registration tests build."""
