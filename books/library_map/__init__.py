"""The map of a reader's library: a neighbourhood-keeping 2-D layout of the highlights'
vectors and named regions (pure numpy, no Django: projection, labels), and the service that
computes it in the background and caches it per reader (services)."""
