/**
 * Child process: the baseline, bare oidc-provider 9 (no edge, no wallet step) configured for the same
 * work as ours: RS256 ID tokens with the same key, PAR, PKCE S256, the code flow, client_secret_post,
 * the same scopes/claims/lifetimes, and the same store through an adapter over the same Store
 * implementation (src/store/oidcAdapter.ts over src/store/memory.ts or src/store/redis.ts).
 *
 * The interaction is programmatic: devInteractions off, the interaction URL is served here and finishes
 * at once with login + consent (a Grant for the requested scope), like a login page that always says yes.
 *
 * Next to it, at `/wallet`, a second bare oidc-provider 9: the OpenID4VCI credential issuer, configured as
 * src/issuance/walletProvider.ts configures ours (features.openid4vci, pre-authorized code grant, resource
 * indicators, one public wallet client, the credential ES256 key), without our edges. The bench's
 * `wallet_steps` phase runs the wallet's requests against it: what bare oidc-provider spends serving them
 * is how the issuance flow's allowance prices them. `POST /bench/offers?n=N` mints offers for that phase
 * (before the measured part, so never measured).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { installSignCounter, serveIpc } from './serverCommon.js';
import { ATTRIBUTES, CLIENT, keyFiles, PIN, type ServerSpec } from './config.js';

installSignCounter();

const spec = JSON.parse(process.env.BENCH_SERVER_SPEC ?? '{}') as ServerSpec;
const { default: Provider, errors } = await import('oidc-provider');
const { MemoryStore } = await import('../../src/store/memory.js');
const { createRedisStore } = await import('../../src/store/redis.js');
const { createOidcAdapterFactory } = await import('../../src/store/oidcAdapter.js');
const { default: Koa } = await import('koa');
const { StatusRegistry } = await import('../../src/status/registry.js');
const { default: mount } = await import('koa-mount');

const files = keyFiles(spec.keyDir);
const jwks = JSON.parse(readFileSync(files.idToken, 'utf8'));
const cookieKeys = JSON.parse(readFileSync(files.cookies, 'utf8')) as string[];
const store =
  spec.store === 'memory'
    ? new MemoryStore()
    : await createRedisStore({ url: spec.redisUrl, keyPrefix: spec.redisPrefix });
const issuer = `http://127.0.0.1:${spec.port}`;
const statuses = new StatusRegistry(store, 1 << 17, 'bench-baseline');
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
  cookies: {
    keys: cookieKeys,
    long: { signed: true, httpOnly: true, sameSite: 'lax' },
    short: { signed: true, httpOnly: true, sameSite: 'lax' },
  },
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
  ttl: {
    AuthorizationCode: lt.code,
    AccessToken: lt.token,
    IdToken: lt.token,
    Interaction: lt.interaction,
    Session: lt.interaction,
    Grant: lt.interaction,
  },
  interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
  findAccount: async (_ctx: unknown, sub: string) => ({
    accountId: sub,
    claims: async () => ({
      sub,
      ...ATTRIBUTES,
      SerialNumber: '00000000-0000-4000-8000-000000000000',
      ExpiresAt: '2030-01-01T00:00:00Z',
    }),
  }),
  renderError: async (ctx: { type: string; body: unknown }, out: object) => {
    ctx.type = 'application/json';
    ctx.body = out;
  },
  enabledJWA: { idTokenSigningAlgValues: ['RS256'] },
} as never);
provider.proxy = true;

const callback = provider.callback();

/*
 * The wallet-facing credential issuer (OpenID4VCI), bare: issuer `${issuer}/wallet`, mounted at /wallet
 * (koa-mount strips the prefix and sets ctx.mountPath, from which oidc-provider builds its endpoint URLs).
 */
const WALLET_PATH = '/wallet';
const walletIssuer = `${issuer}${WALLET_PATH}`;
const WALLET_CLIENT_ID = 'wallet';
const PRE_AUTHORIZED_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
const CREDENTIAL_TYPE = 'EmployeeBadge';
/** as ours: src/issuance/walletIssuer.ts ACCESS_TOKEN_LIFETIME */
const WALLET_ACCESS_TOKEN_LIFETIME = 300;
/** long enough for a whole phase: offers are minted before its warm-up */
const OFFER_LIFETIME = 600;
/** at most this many offers per minting request */
const MAX_OFFERS_PER_CALL = 1_000;
const credentialJwks = JSON.parse(readFileSync(files.credential, 'utf8')) as { keys: object[] };

const walletProvider = new Provider(walletIssuer, {
  adapter: createOidcAdapterFactory(store, 'basewallet') as never,
  clients: [
    {
      client_id: WALLET_CLIENT_ID,
      token_endpoint_auth_method: 'none',
      grant_types: [PRE_AUTHORIZED_CODE_GRANT],
      redirect_uris: [],
      response_types: [],
      id_token_signed_response_alg: 'ES256',
    },
  ],
  jwks: credentialJwks,
  cookies: { keys: cookieKeys },
  responseTypes: ['code'],
  clientAuthMethods: ['none'],
  scopes: ['openid'],
  findAccount: async (_ctx: unknown, accountId: string) => ({ accountId, claims: async () => ({ sub: accountId }) }),
  clientBasedCORS: () => true,
  renderError: async (ctx: { type: string; body: unknown }, out: object) => {
    ctx.type = 'application/json';
    ctx.body = out;
  },
  ttl: {
    AccessToken: WALLET_ACCESS_TOKEN_LIFETIME,
    PreAuthorizedCode: OFFER_LIFETIME,
    Grant: OFFER_LIFETIME + WALLET_ACCESS_TOKEN_LIFETIME,
    AuthorizationCode: 60,
    BackchannelAuthenticationRequest: 60,
    ClientCredentials: 60,
    DeviceCode: 60,
    IdToken: 60,
    Interaction: 60,
    RefreshToken: 60,
    Session: 60,
  },
  features: {
    devInteractions: { enabled: false },
    userinfo: { enabled: false },
    pushedAuthorizationRequests: { enabled: false },
    rpInitiatedLogout: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: async () => walletIssuer,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx: unknown, resource: string) => {
        if (resource !== walletIssuer) throw new errors.InvalidTarget();
        return {
          scope: CREDENTIAL_TYPE,
          audience: walletIssuer,
          accessTokenFormat: 'opaque',
          accessTokenTTL: WALLET_ACCESS_TOKEN_LIFETIME,
        };
      },
    },
    openid4vci: {
      enabled: true,
      ack: 'experimental-01',
      nonceSecret: randomBytes(32),
      preAuthorizedCodeGrant: true,
      // the same shape as ours (src/issuance/credentialConfigurations.ts), so the metadata bodies compare
      credentialConfigurationsSupported: {
        [CREDENTIAL_TYPE]: {
          format: 'dc+sd-jwt',
          scope: CREDENTIAL_TYPE,
          vct: `${issuer}/types/${CREDENTIAL_TYPE}`,
          cryptographic_binding_methods_supported: ['jwk'],
          credential_signing_alg_values_supported: ['ES256'],
          proof_types_supported: { jwt: { proof_signing_alg_values_supported: ['ES256'] } },
          credential_metadata: {
            display: [{ name: 'Employee badge', locale: 'en' }],
            claims: Object.keys(ATTRIBUTES).map((name) => ({
              path: [name],
              mandatory: name !== 'Email',
              display: [{ name, locale: 'en' }],
            })),
          },
        },
      },
      credentialEndpointExpectedAudience: () => walletIssuer,
      // a fixed string: the SD-JWT VC signature is priced on its own (bench/lib/cryptoRates.ts, rates.sdJwtVc),
      // so that the wallet_steps phase is the protocol work only (access token, proof with its embedded JWK, nonce)
      issueCredential: async () => ({ credentials: [{ credential: 'bench.fixed.credential~' }] }),
    },
  },
} as never);

const walletApp = new Koa();
walletApp.keys = cookieKeys;
walletApp.proxy = true;
walletApp.use(mount(WALLET_PATH, walletProvider));
const walletCallback = walletApp.callback();

/**
 * One offer, minted as src/issuance/createOffer.ts mints it on the provider: a Grant for the
 * wallet client with the type's scope on the issuer resource, a PreAuthorizedCode with the same resource,
 * scope and txCode (the PIN); answered by value (OpenID4VCI 1.0 §4.1.1).
 */
async function mintOffer(): Promise<object> {
  const accountId = randomUUID(); // ours: the offer's id
  const grant = new walletProvider.Grant({ accountId, clientId: WALLET_CLIENT_ID });
  grant.addResourceScope(walletIssuer, CREDENTIAL_TYPE);
  const grantId = await grant.save();
  const code = new walletProvider.PreAuthorizedCode({
    accountId,
    clientId: WALLET_CLIENT_ID,
    grantId,
    scope: CREDENTIAL_TYPE,
    resource: walletIssuer,
    txCode: PIN,
    expiresIn: OFFER_LIFETIME,
  });
  const preAuthorizedCode = await code.save();
  return {
    credential_issuer: walletIssuer,
    credential_configuration_ids: [CREDENTIAL_TYPE],
    grants: {
      [PRE_AUTHORIZED_CODE_GRANT]: {
        'pre-authorized_code': preAuthorizedCode,
        tx_code: { length: PIN.length, input_mode: 'numeric' },
      },
    },
  };
}

/** Bench only: `POST /bench/offers?n=N` mints N offers (1 to 1000) and answers them, `{ offers: [...] }`. */
async function mintOffers(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const send = (status: number, body: object) => {
    res.statusCode = status;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(body));
  };
  req.resume();
  const n = Number(new URL(req.url ?? '/', issuer).searchParams.get('n'));
  if (req.method !== 'POST' || !Number.isInteger(n) || n < 1 || n > MAX_OFFERS_PER_CALL) {
    send(400, {
      error: 'invalid_request',
      error_description: `POST /bench/offers?n=N with 1 <= N <= ${MAX_OFFERS_PER_CALL}`,
    });
    return;
  }
  try {
    const offers: object[] = [];
    // the CPU minting takes (nothing else runs meanwhile: minting is the load's prepare step), so that
    // the allowance can price minting an offer, work ours does on its prompt page
    const cpu0 = process.cpuUsage();
    // 50 at a time: the store's round trips overlap (Redis), memory stays bounded
    for (let i = 0; i < n; i += 50)
      offers.push(...(await Promise.all(Array.from({ length: Math.min(50, n - i) }, () => mintOffer()))));
    const cpu = process.cpuUsage(cpu0);
    // the status entry every credential of ours gets (D18: src/status/registry.ts on the same store), priced
    // apart: work an issuer that can revoke cannot avoid, which bare oidc-provider does not do
    const cpu1 = process.cpuUsage();
    const exp = Math.floor(Date.now() / 1000) + 3600;
    for (let i = 0; i < n; i += 50)
      await Promise.all(Array.from({ length: Math.min(50, n - i) }, () => statuses.allocate(randomUUID(), exp)));
    const statusCpu = process.cpuUsage(cpu1);
    send(200, { offers, cpuUs: cpu.user + cpu.system, statusCpuUs: statusCpu.user + statusCpu.system });
  } catch (err) {
    send(500, { error: 'server_error', error_description: (err as Error).message });
  }
}

/** The interaction step: login + consent, at once. */
async function interaction(req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const details = await provider.interactionDetails(req, res);
    const grant = new provider.Grant({ accountId: ACCOUNT, clientId: String(details.params.client_id) });
    grant.addOIDCScope(String(details.params.scope));
    const grantId = await grant.save();
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: ACCOUNT, remember: false }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  } catch (err) {
    res.statusCode = 400;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ error: 'interaction_failed', error_description: (err as Error).message }));
  }
}

// the same server settings as src/server.ts
const server = createServer(
  { maxHeaderSize: 32 * 1024, requestTimeout: 30_000, headersTimeout: 15_000 },
  (req, res) => {
    const url = req.url ?? '/';
    if (url.startsWith('/interaction/')) void interaction(req, res);
    else if (url === WALLET_PATH || url.startsWith(`${WALLET_PATH}/`) || url.startsWith(`${WALLET_PATH}?`))
      void walletCallback(req, res);
    else if (url.startsWith('/bench/offers')) void mintOffers(req, res);
    else void callback(req, res);
  },
);
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
