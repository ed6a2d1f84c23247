/**
 * openid-client 6 at its defaults as the relying party: /verify asks the holder's wallet for an
 * EmployeeBadge, /issue puts one into it (PAR), and /callback shows the ID token's claims. The recipe in
 * docs/relying-parties.md; run as written by test/e2e/rp-openid-client.test.ts.
 *
 *   SERVER=https://vc.example.com/v2.0 CLIENT_ID=hr-portal CLIENT_SECRET=... PORT=8080 \
 *     npx tsx examples/relying-parties/openid-client.ts
 *
 * SERVER is the issuer, or the URL of its discovery document (see the recipe for which the service's
 * settings give). The client needs http://localhost:PORT/callback among its redirectUris and the scopes
 * EmployeeBadge and issue.EmployeeBadge.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { SignJWT } from 'jose';
import * as oidc from 'openid-client';

const { SERVER = '', CLIENT_ID = '', CLIENT_SECRET = '', PORT = '8080' } = process.env;
const redirectUri = `http://localhost:${PORT}/callback`;

// recipe: discovery
// the issuer (discovery at {issuer}/.well-known/openid-configuration, issuer checked), or the document's URL
const config = await oidc.discovery(new URL(SERVER), CLIENT_ID, CLIENT_SECRET); // client_secret_post
// end recipe

/** What each flow needs back at the callback, by state. */
const flows = new Map<string, { verifier?: string; nonce: string }>();

// recipe: request
/** The authorization request, pushed (PAR), with PKCE where the document offers it (Version 1's PAR has none). */
async function authorizationUrl(scope: string, extra: Record<string, string> = {}): Promise<URL> {
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const verifier = config.serverMetadata().supportsPKCE() ? oidc.randomPKCECodeVerifier() : undefined;
  flows.set(state, { verifier, nonce });
  return oidc.buildAuthorizationUrlWithPAR(config, {
    redirect_uri: redirectUri,
    scope,
    state,
    nonce,
    ...(verifier
      ? { code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' }
      : {}),
    ...extra,
  });
}

/** The callback: the code redeemed, the ID token checked (iss, aud, exp, nonce), its claims. */
async function claims(url: URL): Promise<Record<string, unknown>> {
  const state = url.searchParams.get('state') ?? '';
  const flow = flows.get(state);
  flows.delete(state);
  if (!flow) throw new Error('unknown or used state');
  const tokens = await oidc.authorizationCodeGrant(config, url, {
    pkceCodeVerifier: flow.verifier,
    expectedState: state,
    expectedNonce: flow.nonce,
    idTokenExpected: true,
  });
  return { ...tokens.claims() }; // FirstName, LastName, ..., sub; SerialNumber and ExpiresAt after an issuance
}
// end recipe

// recipe: issuance
/** The attributes to issue, signed with the client secret for the issuer the document names. */
const hint = () =>
  new SignJWT({ FirstName: 'Ada', LastName: 'Lovelace' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(CLIENT_ID)
    .setAudience(config.serverMetadata().issuer)
    .setIssuedAt()
    .setExpirationTime('10m')
    .setJti(randomUUID())
    .sign(new TextEncoder().encode(CLIENT_SECRET));
// end recipe

createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', redirectUri);
  try {
    if (url.pathname === '/verify')
      return void res.writeHead(302, { location: (await authorizationUrl('openid EmployeeBadge')).href }).end();
    if (url.pathname === '/issue') {
      const to = await authorizationUrl('openid issue.EmployeeBadge', { id_token_hint: await hint() });
      return void res.writeHead(302, { location: to.href }).end();
    }
    if (url.pathname === '/callback')
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(await claims(url)));
    res.writeHead(404).end();
  } catch (err) {
    // e.g. error=access_denied at the callback when the holder's wallet step failed
    res.writeHead(400, { 'content-type': 'text/plain' }).end(`failed: ${(err as Error).message}`);
  }
}).listen(Number(PORT), () => console.log(`open http://localhost:${PORT}/verify or http://localhost:${PORT}/issue`));
