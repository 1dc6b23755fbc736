"""The stages every call passes: context, arguments, questions, audit, result mapping."""
