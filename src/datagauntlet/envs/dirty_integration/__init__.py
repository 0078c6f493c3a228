"""dirty-integration: collect every record from a paginated API that fails quietly."""
