/**
 * The smallest relying party that issues a credential: openid-client with PAR and PKCE, the attributes in
 * an id_token_hint signed with the client secret, and the ID token read at the callback.
 *
 *   npm start                                  # the service, on the demo config
 *   npx tsx examples/issue.ts                  # this app on http://localhost:8080: open /issue
 *
 * Against your own deployment: ISSUER, CLIENT_ID, CLIENT_SECRET and PORT (the client must have
 * http://localhost:PORT/callback among its redirectUris and the scope issue.MembershipCard).
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { SignJWT } from 'jose';
import * as oidc from 'openid-client';

const issuer = process.env.ISSUER ?? 'http://localhost:3000';
const clientId = process.env.CLIENT_ID ?? 'demo-club';
const clientSecret = process.env.CLIENT_SECRET ?? 'demo-club-secret-change-me';
const port = Number(process.env.PORT ?? 8080);
const redirectUri = `http://localhost:${port}/callback`;

// Version 2: the full discovery URL (the document lives under /v2.0; its issuer is the base URL)
const config = await oidc.discovery(
  new URL(`${issuer}/v2.0/.well-known/openid-configuration`),
  clientId,
  clientSecret,
  oidc.ClientSecretPost(clientSecret),
  {
    execute: issuer.startsWith('http://') ? [oidc.allowInsecureRequests] : [], // http only for a local try
  },
);
/** What each flow needs back at the callback, by state. */
const flows = new Map<string, { verifier: string; nonce: string }>();

createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', redirectUri);
  try {
    if (url.pathname === '/issue') {
      // the credential's attributes, signed with the client secret for the issuer of the version called
      const hint = await new SignJWT({ MemberName: 'Ada Lovelace', MemberNumber: 1815 })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer(clientId)
        .setAudience(config.serverMetadata().issuer)
        .setIssuedAt()
        .setExpirationTime('10m')
        .setJti(randomUUID())
        .sign(new TextEncoder().encode(clientSecret));
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      flows.set(state, { verifier, nonce });
      const authorize = await oidc.buildAuthorizationUrlWithPAR(config, {
        redirect_uri: redirectUri,
        scope: 'openid issue.MembershipCard',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
        id_token_hint: hint,
      });
      res.writeHead(302, { location: authorize.href }).end(); // to the page with the QR code and wallet link
      return;
    }
    if (url.pathname === '/callback') {
      const state = url.searchParams.get('state') ?? '';
      const flow = flows.get(state);
      flows.delete(state);
      if (!flow) throw new Error('unknown or used state');
      const tokens = await oidc.authorizationCodeGrant(config, url, {
        pkceCodeVerifier: flow.verifier,
        expectedState: state,
        expectedNonce: flow.nonce,
      });
      // the attributes as issued, SerialNumber (the credential's handle for revocation) and ExpiresAt
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(tokens.claims(), null, 2));
      return;
    }
    res.writeHead(404).end();
  } catch (err) {
    // e.g. error=access_denied at the callback when the holder's wallet step failed
    res.writeHead(400, { 'content-type': 'text/plain' }).end(`issuance failed: ${(err as Error).message}`);
  }
}).listen(port, () => console.log(`open http://localhost:${port}/issue`));
