"""Resources: small classes over the client's transport, one per platform area."""
