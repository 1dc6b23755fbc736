"""prompts/list and prompts/get for one caller."""
