"""The hasher for OAuth client secrets.

A client secret is 128 random characters the server generated, not a password a person chose:
no dictionary to slow down, so one PBKDF2 round is as strong as a million. The password hasher's
million rounds would instead cost ~0.7 s of CPU per dynamic registration, on an endpoint anyone may
call, and again on every token request of a confidential client.
"""

from django.contrib.auth.hashers import PBKDF2PasswordHasher


class ClientSecretHasher(PBKDF2PasswordHasher):
    algorithm = "pbkdf2_sha256_secret"
    iterations = 1
