"""Authlib (Debian's python3-authlib, with Flask) as the relying party: /verify asks the holder's wallet
for an EmployeeBadge, /issue puts one into it, and /callback shows the claims of the ID token that
Authlib validated against the service's JWKS. The recipe in docs/relying-parties.md; run as written by
test/e2e/rp-authlib.test.ts.

    SERVER_METADATA_URL=https://vc.example.com/v2.0/.well-known/openid-configuration \\
    CLIENT_ID=hr-portal CLIENT_SECRET=... SESSION_SECRET=... PORT=8080 /usr/bin/python3 authlib_app.py

The client needs http://localhost:PORT/callback among its redirectUris and the scopes EmployeeBadge and
issue.EmployeeBadge.
"""
import os
import time
import uuid

from authlib.integrations.flask_client import OAuth
from authlib.jose import jwt
from flask import Flask, jsonify, url_for

CLIENT_ID = os.environ['CLIENT_ID']
CLIENT_SECRET = os.environ['CLIENT_SECRET']

app = Flask(__name__)
app.secret_key = os.environ['SESSION_SECRET']  # Flask's signed session keeps state, nonce and code verifier
oauth = OAuth(app)

# recipe: register
oauth.register(
    'vc',
    server_metadata_url=os.environ['SERVER_METADATA_URL'],
    client_id=CLIENT_ID,
    client_secret=CLIENT_SECRET,  # sent as HTTP Basic (client_secret_basic), Authlib's default
    client_kwargs={'scope': 'openid EmployeeBadge', 'code_challenge_method': 'S256'},
)
# end recipe


# recipe: verify
@app.route('/verify')
def verify():
    # a fresh state and nonce, and a PKCE S256 challenge, kept in the session
    return oauth.vc.authorize_redirect(url_for('callback', _external=True))


@app.route('/callback')
def callback():
    # the code redeemed; the ID token's signature (JWKS), iss, aud, exp and nonce checked
    token = oauth.vc.authorize_access_token()
    return jsonify(token['userinfo'])  # the ID token's claims: FirstName, LastName, ..., sub
# end recipe


# recipe: issue
@app.route('/issue')
def issue():
    now = int(time.time())
    hint = jwt.encode({'alg': 'HS256', 'typ': 'JWT'}, {
        'iss': CLIENT_ID,
        'aud': oauth.vc.load_server_metadata()['issuer'],
        'iat': now,
        'exp': now + 600,
        'jti': str(uuid.uuid4()),
        'FirstName': 'Ada',
        'LastName': 'Lovelace',
    }, CLIENT_SECRET).decode()
    return oauth.vc.authorize_redirect(
        url_for('callback', _external=True), scope='openid issue.EmployeeBadge', id_token_hint=hint)
# end recipe


if __name__ == '__main__':
    port = int(os.environ.get('PORT', '8080'))
    print(f'open http://localhost:{port}/verify or http://localhost:{port}/issue', flush=True)
    app.run(host='localhost', port=port)
