import { randomUUID } from 'node:crypto';
import Koa, { type Context } from 'koa';
import mount from 'koa-mount';
import type Provider from 'oidc-provider';
import type { Config, ClientConfig, CredentialType } from './config/schema.js';
import type { LoadedConfig } from './config/load.js';
import { loadKeys, publicJwks, type KeySet } from './keys/keys.js';
import type { Store } from './store/types.js';
import { createStore } from './store/create.js';
import { StoreUnavailableError } from './store/redis.js';
import { versionProfiles } from './oidc/versions.js';
import { createRpProvider } from './oidc/provider.js';
import { createVersionEdge } from './oidc/edge.js';
import { createWalletIssuer, type WalletIssuer } from './issuance/walletIssuer.js';
import { createInteractionRoutes } from './interaction/routes.js';
import { WalletSteps } from './interaction/steps.js';
import { router } from './http/router.js';
import { issuanceFlowClaims, verificationFlowClaims, type FlowClaims } from './interaction/flowClaims.js';
import { createVerifier, type Verifier } from './verification/verifier.js';
import { renderMessage } from './interaction/views/message.js';
import { createDemoRoutes } from './demo/routes.js';
import { createLogger, loggablePath, type Logger } from './log.js';
import { CookieKeys } from './http/cookieKeys.js';

export interface Service {
  app: Koa;
  config: Config;
  store: Store;
  keys: KeySet;
  providers: Record<'v1' | 'v2', Provider>;
  walletIssuer: WalletIssuer;
  verifier: Verifier;
  logger: Logger;
  generatedKeys: string[];
  close(): Promise<void>;
}

export interface ServiceOptions {
  store?: Store;
  logger?: Logger;
}

/** Headers every answer carries. */
function securityHeaders(ctx: Context, next: Koa.Next): Promise<void> {
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Frame-Options', 'DENY');
  return next();
}

/**
 * The last line: anything unexpected becomes a 500 with a generic body and is logged with a reference
 * (never the request's secrets); Node's own HTTP errors (bad JSON, oversized) keep their status.
 */
function errorBoundary(logger: Logger) {
  return async (ctx: Context, next: Koa.Next) => {
    try {
      await next();
    } catch (err) {
      const e = err as { status?: number; expose?: boolean; message?: string };
      if (err instanceof StoreUnavailableError) {
        ctx.status = 503;
        ctx.set('Retry-After', '2');
        ctx.set('Cache-Control', 'no-store');
        if (ctx.accepts('json', 'html') === 'html') {
          ctx.type = 'text/html; charset=utf-8';
          ctx.body = renderMessage({ nonce: '', title: 'Temporarily unavailable', message: 'The service cannot complete this step right now. Please try again in a moment.', status: 503 });
        } else {
          ctx.body = { error: 'temporarily_unavailable', error_description: err.error_description };
        }
        return;
      }
      if (e.status && e.status < 500 && e.expose) {
        ctx.status = e.status;
        ctx.body = { error: 'invalid_request', error_description: e.message };
        return;
      }
      const ref = randomUUID();
      logger.error({ ref, path: loggablePath(ctx.path), err: { name: (err as Error).name, message: (err as Error).message, stack: (err as Error).stack } }, 'unexpected error');
      ctx.status = 500;
      ctx.set('Cache-Control', 'no-store');
      if (ctx.accepts('json', 'html') === 'html') {
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = renderMessage({ nonce: '', title: 'Something went wrong', message: `Please try again. Reference: ${ref}`, status: 500 });
      } else {
        ctx.body = { error: 'server_error', error_description: `unexpected error, reference ${ref}` };
      }
    }
  };
}

function requestLog(logger: Logger) {
  return async (ctx: Context, next: Koa.Next) => {
    if (!logger.isLevelEnabled('error')) return next(); // a silent logger: nothing to time or describe
    const start = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const level = ctx.status >= 500 ? 'error' : 'info';
      logger[level]({ method: ctx.method, path: loggablePath(ctx.path), status: ctx.status, ms: Math.round(ms * 10) / 10, error: (ctx.body as { error?: string } | undefined)?.error }, 'request');
    }
  };
}

export async function createService(loaded: LoadedConfig, opts: ServiceOptions = {}): Promise<Service> {
  const { config } = loaded;
  const logger = opts.logger ?? createLogger(config.logLevel);
  const { keys, generated } = await loadKeys(config.keys, loaded.baseDir);
  const store = opts.store ?? (await createStore(config.store));
  const clients = new Map<string, ClientConfig>(config.clients.map((c) => [c.clientId, c]));
  const credentialTypes = new Map<string, CredentialType>(config.credentialTypes.map((t) => [t.name, t]));
  const profiles = versionProfiles(config.baseUrl);
  // one signer for every signed cookie (Keygrip-compatible: src/http/cookieKeys.ts)
  const cookieKeys = new CookieKeys(keys.cookies);
  const deps = { config, store, idTokenKeys: keys.idToken, cookieKeys };
  const providers = { v1: await createRpProvider(profiles.v1, deps), v2: await createRpProvider(profiles.v2, deps) };
  const publicKeys = publicJwks(keys.idToken);

  // the wallet's request that completes a step keeps the ID token's claims for the holder's browser
  const steps = new WalletSteps(store);
  const stepSucceeded = (stepId: string, claims: FlowClaims) => steps.succeeded(stepId, claims, config.lifetimes.interaction);
  const walletIssuer = createWalletIssuer({
    baseUrl: config.baseUrl,
    path: config.walletPath,
    store,
    credentialKeys: keys.credential,
    credentialTypes: config.credentialTypes,
    offerLifetime: config.lifetimes.offer,
    pinAttempts: config.pinAttempts,
    cookieKeys: keys.cookies,
    onIssued: (offer) => stepSucceeded(offer.stepId, issuanceFlowClaims(offer)),
  });

  const verifier = createVerifier({
    baseUrl: config.baseUrl,
    store,
    credentialTypes: config.credentialTypes,
    trustedIssuers: config.trustedIssuers,
    ownIssuer: { issuer: walletIssuer.credentialIssuer, jwks: publicJwks(keys.credential) },
    requestLifetime: config.lifetimes.offer,
    onVerified: (requestId, result) => stepSucceeded(requestId, verificationFlowClaims(result)),
  });
  const interaction = createInteractionRoutes({ config, store, steps, providers, walletIssuer, verifier, clients, credentialTypes });

  const inner = new Koa();
  inner.keys = cookieKeys;
  inner.proxy = true;
  inner.use(createVersionEdge({ profile: profiles.v2, provider: providers.v2, config, store, clients, credentialTypes, publicKeys }));
  inner.use(createVersionEdge({ profile: profiles.v1, provider: providers.v1, config, store, clients, credentialTypes, publicKeys }));
  inner.use(walletIssuer.middleware);
  inner.use(verifier.middleware);
  inner.use(interaction);
  if (config.demo) inner.use(createDemoRoutes(config, store, keys.idToken));
  inner.use(
    router([
      { method: 'GET', path: '/healthz', handle: (ctx) => void (ctx.body = { status: 'ok' }) },
      {
        method: 'GET',
        path: '/readyz',
        handle: async (ctx) => {
          try {
            await store.ping();
            ctx.body = { status: 'ready', store: store.kind };
          } catch {
            ctx.status = 503;
            ctx.body = { status: 'unavailable', store: store.kind };
          }
        },
      },
    ]),
  );
  inner.use(async (ctx) => {
    ctx.status = 404;
    ctx.body = { error: 'not_found', error_description: `no endpoint at ${ctx.method} ${ctx.path}` };
  });

  const app = new Koa();
  app.keys = cookieKeys;
  app.proxy = true;
  app.silent = true;
  app.use(securityHeaders);
  app.use(requestLog(logger));
  app.use(errorBoundary(logger));
  const basePath = new URL(config.baseUrl).pathname.replace(/\/$/, '');
  app.use(basePath ? mount(basePath, inner) : mount(inner));

  return {
    app,
    config,
    store,
    keys,
    providers,
    walletIssuer,
    verifier,
    logger,
    generatedKeys: generated,
    close: async () => {
      await store.close();
    },
  };
}
