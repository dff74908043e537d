"""The password hasher the tests use: Django's own PBKDF2, with one iteration.

A reader made with the production hasher costs a quarter of a CPU-second (1,000,000
iterations), and most tests make two. This one writes the same `pbkdf2_sha256$…` format, so
a server started as a separate process (which hashes as in production) still checks these
passwords: their iteration count is stored in the hash.
"""

from django.contrib.auth.hashers import PBKDF2PasswordHasher


class OneIterationPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    iterations = 1
