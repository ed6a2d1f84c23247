import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import Provider, { interactionPolicy, type KoaContextWithOIDC } from 'oidc-provider';
import { exportJWK, generateKeyPair } from 'jose';
import { idvConfiguration } from './idv/configuration.js';
import { loginPages } from './idv/login.js';
import { mountProvider } from './idv/mount.js';
import { createPeople } from './idv/people.js';

/**
 * A built-in test identity provider for VerifiedIdentity_Other (D12), for the demo (config `demo: true`)
 * and the tests: a real oidc-provider instance with a login page of its own, where a person "verifies"
 * whatever name and birth date they enter. Never an identity check of anything.
 *
 * Keys, cookie key and records (oidc-provider's own memory adapter) live in this process only, so one
 * instance serves a whole login: the demo runs it on one instance.
 *
 * Its parts, in ./idv/: the oidc-provider configuration, the login page, the people it confirmed, and
 * the mounting under the issuer's path.
 */
export interface DemoIdvClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  clientAuth: 'client_secret_basic' | 'client_secret_post';
}

export interface DemoIdvOptions {
  /** absolute URL it is reachable at, e.g. http://localhost:3000/demo/idv */
  issuer: string;
  clients: DemoIdvClient[];
  /** OpenID Connect for Identity Assurance: also offer the claims as `verified_claims` when asked for */
  verifiedClaims?: boolean;
}

/**
 * A real oidc-provider instance with its own login page. `middleware` serves the provider and its pages
 * under the issuer URL's path (it calls next() for anything else), for use inside a Koa app whose
 * requests arrive with the full path (e.g. /demo/idv/...), without koa-mount.
 */
export async function createDemoIdvProvider(
  opts: DemoIdvOptions,
): Promise<{ provider: Provider; middleware: Middleware }> {
  const issuerUrl = new URL(opts.issuer);
  const issuerPath = issuerUrl.pathname.replace(/\/$/, '');
  const issuer = `${issuerUrl.origin}${issuerPath}`;
  // the login form's post ends, through redirects, at a client's redirect URI: the page's CSP must allow that
  const formTargets = [...new Set(opts.clients.flatMap((c) => c.redirectUris.map((u) => new URL(u).origin)))].filter(
    (o) => o !== issuerUrl.origin,
  );
  const people = createPeople();

  const { privateKey } = await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 });
  const signingKey = { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'RS256', use: 'sig' };

  // the page every authorization request shows, even in a browser that confirmed someone before
  const policy = interactionPolicy.base();
  policy
    .get('login')!
    .checks.add(
      new interactionPolicy.Check(
        'demo_asks_every_time',
        'the demo provider asks the person on every request',
        (ctx: KoaContextWithOIDC) =>
          ctx.oidc.result?.login ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT,
      ),
    );

  const provider = new Provider(issuer, idvConfiguration({ opts, issuer, signingKey, policy, people, formTargets }));
  // behind the service's app (or any proxy) the host and scheme come from X-Forwarded-*
  provider.proxy = true;
  provider.use(loginPages({ provider, issuer, formTargets, people }));
  return { provider, middleware: mountProvider(provider, issuerPath) };
}
