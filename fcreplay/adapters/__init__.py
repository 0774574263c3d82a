"""Provider adapters: pure translation between fcreplay's neutral types and one wire format."""
