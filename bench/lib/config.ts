/**
 * What both servers are configured with: the same client (client_secret_post, PKCE S256, one redirect
 * URI), the same scopes and claims, the same RS256 ID token key (one key file, generated once per run),
 * the same lifetimes.
 */
import { join } from 'node:path';

export const CLIENT = { id: 'bench-rp', secret: 'bench-secret-0123456789abcdef', redirect: 'https://rp.bench.example/cb' };
export const ATTRIBUTES = { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' };
export const PIN = '4321';
export const ISSUE_SCOPE = 'openid issue.EmployeeBadge';
export const VERIFY_SCOPE = 'openid EmployeeBadge';
/** D13's External Client flow: the issuance scope with `External` (the webhook, not the browser, brings the client back). */
export const EXTERNAL_ISSUE_SCOPE = `${ISSUE_SCOPE} External`;
/** The bench client's webhook secret (Standard Webhooks: whsec_ and the base64 of 32 bytes); our server signs with it, the load process verifies. */
export const WEBHOOK_SECRET = `whsec_${Buffer.from('bench-webhook-secret-0123456789a').toString('base64')}`;
/** Where the load process's webhook receiver listens (its port is chosen before our server starts: ServerSpec.webhookPort). */
export const webhookUrl = (port: number) => `http://127.0.0.1:${port}/hooks`;

/**
 * Codes live longer than the default 60 s so that the token phase can redeem codes minted before it
 * (the brief: "start the service with a longer lifetimes.code"); the baseline gets the same TTL.
 */
export const LIFETIMES = { par: 60, code: 600, token: 60, offer: 300, interaction: 600, continuation: 300 };
/** --soak: short lifetimes so that 100,000 requests span several expiry periods and the store's bound shows. */
export const SOAK_LIFETIMES = { par: 10, code: 10, token: 10, offer: 20, interaction: 20, continuation: 20 };

export interface ServerSpec {
  kind: 'ours' | 'baseline';
  store: 'memory' | 'redis';
  redisUrl: string;
  /** unique per server and run; never a FLUSHALL */
  redisPrefix: string;
  keyDir: string;
  lifetimes: typeof LIFETIMES;
  port: number;
  /** ours: the port of the load process's webhook receiver (external_issuance_flow), known before the server starts */
  webhookPort: number;
}

export const keyFiles = (keyDir: string) => ({
  idToken: join(keyDir, 'id-token.jwks.json'),
  credential: join(keyDir, 'credential.jwks.json'),
  cookies: join(keyDir, 'cookies.json'),
});

/** Our service's configuration, as an operator would write it. */
export function oursConfig(spec: ServerSpec): Record<string, unknown> {
  return {
    baseUrl: `http://127.0.0.1:${spec.port}`,
    port: spec.port,
    host: '127.0.0.1',
    store: spec.store === 'memory' ? 'memory' : { url: spec.redisUrl, keyPrefix: spec.redisPrefix },
    logLevel: 'silent',
    keys: { ...keyFiles(spec.keyDir), generate: false },
    lifetimes: spec.lifetimes,
    credentialTypes: [
      {
        name: 'EmployeeBadge',
        displayName: 'Employee badge',
        pinCodeLength: 4,
        validity: 'P30D',
        attributes: { FirstName: { type: 'string' }, LastName: { type: 'string' }, Email: { type: 'email', required: false } },
      },
    ],
    clients: [
      {
        clientId: CLIENT.id,
        clientName: 'Bench RP',
        clientSecret: CLIENT.secret,
        redirectUris: [CLIENT.redirect],
        pkce: 'required',
        pkceMethods: ['S256'],
        // External: only external_issuance_flow requests it; the webhook goes to that phase's load process
        scopes: ['issue.EmployeeBadge', 'EmployeeBadge', 'External'],
        webhook: { url: webhookUrl(spec.webhookPort), secret: WEBHOOK_SECRET },
      },
    ],
  };
}
