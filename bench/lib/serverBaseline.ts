/**
 * Child process: the baseline, bare oidc-provider 9 (no edge, no wallet step) configured for the same
 * work as ours: RS256 ID tokens with the same key, PAR, PKCE S256, the code flow, client_secret_post,
 * the same scopes/claims/lifetimes, and the same store through an adapter over the same Store
 * implementation (src/store/oidcAdapter.ts over src/store/memory.ts or src/store/redis.ts).
 *
 * The interaction is programmatic: devInteractions off, the interaction URL is served here and finishes
 * at once with login + consent (a Grant for the requested scope), like a login page that always says yes.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { installSignCounter, serveIpc } from './serverCommon.js';
import { ATTRIBUTES, CLIENT, keyFiles, type ServerSpec } from './config.js';

installSignCounter();

const spec = JSON.parse(process.env.BENCH_SERVER_SPEC ?? '{}') as ServerSpec;
const { default: Provider } = await import('oidc-provider');
const { MemoryStore } = await import('../../src/store/memory.js');
const { createRedisStore } = await import('../../src/store/redis.js');
const { createOidcAdapterFactory } = await import('../../src/store/oidcAdapter.js');

const files = keyFiles(spec.keyDir);
const jwks = JSON.parse(readFileSync(files.idToken, 'utf8'));
const cookieKeys = JSON.parse(readFileSync(files.cookies, 'utf8')) as string[];
const store = spec.store === 'memory' ? new MemoryStore() : await createRedisStore({ url: spec.redisUrl, keyPrefix: spec.redisPrefix });
const issuer = `http://127.0.0.1:${spec.port}`;
const ACCOUNT = 'holder';
const lt = spec.lifetimes;

const provider = new Provider(issuer, {
  adapter: createOidcAdapterFactory(store, 'base', { PushedAuthorizationRequest: Math.min(lt.par, 60) }) as never,
  clients: [
    {
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
      redirect_uris: [CLIENT.redirect],
      response_types: ['code'],
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: 'client_secret_post',
      id_token_signed_response_alg: 'RS256',
      scope: 'openid issue.EmployeeBadge EmployeeBadge',
    },
  ],
  clientAuthMethods: ['client_secret_post'],
  jwks,
  cookies: { keys: cookieKeys, long: { signed: true, httpOnly: true, sameSite: 'lax' }, short: { signed: true, httpOnly: true, sameSite: 'lax' } },
  features: {
    devInteractions: { enabled: false },
    pushedAuthorizationRequests: { enabled: true, requirePushedAuthorizationRequests: false },
    userinfo: { enabled: false },
    rpInitiatedLogout: { enabled: false },
  },
  responseTypes: ['code'],
  scopes: ['openid', 'issue.EmployeeBadge', 'EmployeeBadge'],
  claims: {
    openid: ['sub'],
    'issue.EmployeeBadge': ['FirstName', 'LastName', 'Email', 'SerialNumber', 'ExpiresAt'],
    EmployeeBadge: ['FirstName', 'LastName', 'Email'],
  },
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  ttl: { AuthorizationCode: lt.code, AccessToken: lt.token, IdToken: lt.token, Interaction: lt.interaction, Session: lt.interaction, Grant: lt.interaction },
  interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
  findAccount: async (_ctx: unknown, sub: string) => ({
    accountId: sub,
    claims: async () => ({ sub, ...ATTRIBUTES, SerialNumber: '00000000-0000-4000-8000-000000000000', ExpiresAt: '2030-01-01T00:00:00Z' }),
  }),
  renderError: async (ctx: { type: string; body: unknown }, out: object) => {
    ctx.type = 'application/json';
    ctx.body = out;
  },
  enabledJWA: { idTokenSigningAlgValues: ['RS256'] },
} as never);
provider.proxy = true;

const callback = provider.callback();

/** The interaction step: login + consent, at once. */
async function interaction(req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const details = await provider.interactionDetails(req, res);
    const grant = new provider.Grant({ accountId: ACCOUNT, clientId: String(details.params.client_id) });
    grant.addOIDCScope(String(details.params.scope));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId: ACCOUNT, remember: false }, consent: { grantId } }, { mergeWithLastSubmission: false });
  } catch (err) {
    res.statusCode = 400;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ error: 'interaction_failed', error_description: (err as Error).message }));
  }
}

// the same server settings as src/server.ts
const server = createServer({ maxHeaderSize: 32 * 1024, requestTimeout: 30_000, headersTimeout: 15_000 }, (req, res) => {
  if (req.url?.startsWith('/interaction/')) void interaction(req, res);
  else void callback(req, res);
});
server.keepAliveTimeout = 5_000;
await new Promise<void>((resolve) => server.listen(spec.port, '127.0.0.1', resolve));

serveIpc({
  stop: async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await store.close();
  },
  storeSize: () => (store as { size?: number }).size,
});
process.send?.({ type: 'ready', url: issuer, pid: process.pid });
