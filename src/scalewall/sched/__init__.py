"""Multi-tenant GPU cluster scheduler simulator: discrete-event engine, policies, traces."""
