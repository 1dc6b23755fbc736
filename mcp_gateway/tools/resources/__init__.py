"""resources/list and resources/read for one caller."""
