/**
 * Auth.js (@auth/core, the framework-agnostic core of NextAuth) as the relying party, on node:http:
 * /verify asks the holder's wallet for an EmployeeBadge, /issue puts one into it, /claims shows what the
 * ID token said. The recipe in docs/relying-parties.md; run as written by test/e2e/rp-authjs.test.ts.
 *
 *   ISSUER=https://vc.example.com/v2.0 CLIENT_ID=hr-portal CLIENT_SECRET=... AUTH_SECRET=... PORT=8080 \
 *     npx tsx examples/relying-parties/authjs.ts
 *
 * The client needs http://localhost:PORT/auth/callback/vc among its redirectUris and the scopes
 * EmployeeBadge and issue.EmployeeBadge. ISSUER is what the library discovers from (see the recipe for
 * which issuer the service's settings give); DISCOVERY=off gives the interface's endpoints one by one.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Auth, type AuthConfig } from '@auth/core';
import type { OIDCConfig } from '@auth/core/providers';
import { SignJWT } from 'jose';

const { ISSUER = '', CLIENT_ID = '', CLIENT_SECRET = '', AUTH_SECRET, PORT = '8080' } = process.env;
const origin = `http://localhost:${PORT}`;

// recipe: provider
const vc: OIDCConfig<Record<string, unknown>> = {
  id: 'vc',
  name: 'your wallet',
  type: 'oidc',
  issuer: ISSUER, // discovery from the issuer; token requests with client_secret_basic; PKCE S256
  clientId: CLIENT_ID,
  clientSecret: CLIENT_SECRET,
  checks: ['pkce', 'state', 'nonce'], // Auth.js's default is PKCE alone
  authorization: { params: { scope: 'openid EmployeeBadge' } },
};
// end recipe

// recipe: without discovery
// the interface's own endpoints, for a service without the operator's issuer settings
const base = ISSUER.replace(/\/v2\.0$/, '');
const explicit: OIDCConfig<Record<string, unknown>> = {
  ...vc,
  issuer: base, // the ID token's iss
  authorization: { url: `${base}/v2.0/oidc/authorize`, params: { scope: 'openid EmployeeBadge' } },
  token: `${base}/v2.0/oidc/token`, // with a token URL, Auth.js discovers nothing
};
// end recipe

// recipe: config
const config: AuthConfig = {
  providers: [process.env.DISCOVERY === 'off' ? explicit : vc],
  secret: AUTH_SECRET,
  trustHost: true,
  basePath: '/auth',
  callbacks: {
    // Auth.js has checked the ID token (iss, aud, exp, nonce); keep its claims in the session
    jwt: ({ token, profile }) => (profile ? { ...token, claims: profile } : token),
    session: ({ session, token }) => Object.assign(session, { claims: token.claims }),
  },
};
// end recipe

/** node:http to the Fetch API's Request and back: all Auth.js needs. */
async function toRequest(req: IncomingMessage, path = req.url ?? '/'): Promise<Request> {
  const body: Buffer[] = [];
  for await (const chunk of req) body.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (value) headers.set(name, String(value));
  return new Request(new URL(path, origin), {
    method: req.method,
    headers,
    body: body.length ? Buffer.concat(body) : null,
  });
}
async function send(res: ServerResponse, answer: Response): Promise<void> {
  const headers: Record<string, string | string[]> = { 'set-cookie': answer.headers.getSetCookie() };
  answer.headers.forEach((value, name) => name !== 'set-cookie' && (headers[name] = value));
  res.writeHead(answer.status, headers).end(Buffer.from(await answer.arrayBuffer()));
}
const ask = (req: IncomingMessage, path: string) =>
  Auth(new Request(new URL(path, origin), { headers: { cookie: req.headers.cookie ?? '' } }), config);

// recipe: issuance
/** A button that signs in with the attributes to issue: Auth.js passes the query on to the authorization request. */
async function issueButton(req: IncomingMessage): Promise<Response> {
  const issuer = process.env.DISCOVERY === 'off' ? base : ISSUER; // the hint's aud is the issuer
  const hint = await new SignJWT({ FirstName: 'Ada', LastName: 'Lovelace' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(CLIENT_ID)
    .setAudience(issuer)
    .setIssuedAt()
    .setExpirationTime('10m')
    .setJti(randomUUID())
    .sign(new TextEncoder().encode(CLIENT_SECRET));
  const params = new URLSearchParams({ scope: 'openid issue.EmployeeBadge', id_token_hint: hint });
  return signInButton(req, `/auth/signin/vc?${params}`, 'Receive your employee badge');
}
// end recipe

/** Auth.js signs in on a POST carrying its CSRF token (the cookie and the form field). */
async function signInButton(req: IncomingMessage, action: string, label: string): Promise<Response> {
  const csrf = await ask(req, '/auth/csrf');
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const page = `<!doctype html><title>HR portal</title><form method="post" action="${action.replaceAll('&', '&amp;')}">
<input type="hidden" name="csrfToken" value="${csrfToken}"><input type="hidden" name="callbackUrl" value="/claims">
<button>${label}</button></form>`;
  const headers = new Headers({ 'content-type': 'text/html' });
  for (const cookie of csrf.headers.getSetCookie()) headers.append('set-cookie', cookie);
  return new Response(page, { headers });
}

createServer(async (req, res) => {
  try {
    const path = new URL(req.url ?? '/', origin).pathname;
    if (path.startsWith('/auth/')) return await send(res, await Auth(await toRequest(req), config));
    if (path === '/verify') return await send(res, await signInButton(req, '/auth/signin/vc', 'Show your badge'));
    if (path === '/issue') return await send(res, await issueButton(req));
    if (path === '/claims') {
      // recipe: claims
      const session = (await (await ask(req, '/auth/session')).json()) as { claims?: Record<string, unknown> } | null;
      // e.g. session.claims.FirstName, .sub (a verification: the holder key's thumbprint; an issuance: SerialNumber)
      // end recipe
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(session?.claims ?? null));
    }
    res.writeHead(404).end();
  } catch (err) {
    res.writeHead(500, { 'content-type': 'text/plain' }).end(`failed: ${(err as Error).message}`);
  }
}).listen(Number(PORT), () => console.log(`open ${origin}/verify or ${origin}/issue`));
