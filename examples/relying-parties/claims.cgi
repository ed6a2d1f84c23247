#!/usr/bin/python3
"""The page behind mod_auth_openidc (mod_auth_openidc.conf beside this file): the ID token's claims,
which the module passes to the application as OIDC_CLAIM_<name> (environment variables for a CGI, or
request headers for a proxied application), as JSON."""
import json
import os

# recipe: claims
claims = {name[len('OIDC_CLAIM_'):]: value for name, value in os.environ.items() if name.startswith('OIDC_CLAIM_')}
# end recipe
print('Content-Type: application/json')
print()
print(json.dumps(claims))
