import compose from 'koa-compose';
import type { Middleware } from 'koa';
import type { JWK } from 'jose';
import type { SigningKeys } from '../keys/keyRing.js';
import type { CookieKeys } from '../http/cookieKeys.js';
import type { Store } from '../store/types.js';
import { createWalletIssuer } from '../issuance/walletIssuer.js';
import { DEMO_PID_PATH, DEMO_PID_TYPE } from './pidType.js';
import { pidForm, pidOffer } from './pages/pid.js';
import { mdlFile, mdlForm, pidMdocFile } from './pages/mdoc.js';
import type { DemoMdocs } from './mdocs.js';

export { DEMO_PID_PATH, DEMO_PID_TYPE, DEMO_PID_VCT } from './pidType.js';

export interface DemoPidOptions {
  baseUrl: string;
  store: Store;
  /** the service's credential keys (ES256, the first signs): shared by instances, so any instance issues */
  credentialKeys: SigningKeys | { keys: JWK[] };
  cookieKeys: CookieKeys | string[];
  /** the root of derived secrets (createWalletIssuer's `secret`) */
  secret?: string;
  /** seconds an offer lives */
  offerLifetime: number;
  statusList: { ttl: number; size: number };
  /** mdocs under the demo's test IACA (src/demo/mdocs.ts): the PID as an mdoc, and an mDL at /demo/mdl */
  mdocs?: DemoMdocs;
  /** the verification types that ask an mDL, which /demo/mdl names */
  ageTypes?: string[];
}

export interface DemoPidIssuer {
  /** `{base_url}/demo-pid` */
  credentialIssuer: string;
  /** the pages at /demo/pid and the issuer's wallet-facing endpoints; next() otherwise */
  middleware: Middleware;
}

/**
 * A demo PID issuer (config `demo: true` only, never in production), so that a newcomer can try the
 * VerifiedIdentity flow with the dev wallet: a real OpenID4VCI issuer (the service's own wallet-facing
 * issuer code, `createWalletIssuer`) at `{base_url}/demo-pid`, issuing one SD-JWT VC of vct
 * `urn:eudi:pid:1` with the claims of the EU PID the demo's identity block asks for. It signs with the
 * service's credential keys (every instance has them) and publishes them as SD-JWT VC issuer metadata at
 * `/.well-known/jwt-vc-issuer/demo-pid`, where the verifier finds them for a trusted issuer without keys.
 *
 * `/demo/pid` is its page: a form of the PID's claims, and the offer link, QR code and dev wallet command.
 * With `mdocs`, the same PID as an mdoc file (POST `/demo/pid/mdoc`) and an mDL for age checks (`/demo/mdl`),
 * both under the demo's test IACA, which the dev wallet imports.
 */
export function createDemoPidIssuer(o: DemoPidOptions): DemoPidIssuer {
  const walletIssuer = createWalletIssuer({
    baseUrl: o.baseUrl,
    path: DEMO_PID_PATH,
    store: o.store,
    credentialKeys: o.credentialKeys,
    credentialTypes: [DEMO_PID_TYPE],
    offerLifetime: o.offerLifetime,
    pinAttempts: 3, // its offers carry no PIN
    cookieKeys: o.cookieKeys,
    secret: o.secret,
    statusList: o.statusList,
    // no holder's prompt waits for these offers: nothing to finish when one is issued or fails
  });
  const pageDeps = { baseUrl: o.baseUrl, walletIssuer, mdoc: o.mdocs !== undefined };
  const mdocDeps = o.mdocs && { ...pageDeps, mdocs: o.mdocs, ageTypes: o.ageTypes ?? [] };

  const pages: Middleware = async (ctx, next) => {
    if (ctx.path === '/demo/pid') {
      if (ctx.method === 'GET') return pidForm(ctx, pageDeps);
      if (ctx.method === 'POST') return pidOffer(ctx, pageDeps);
    }
    if (mdocDeps && ctx.path === '/demo/pid/mdoc' && ctx.method === 'POST') return pidMdocFile(ctx, mdocDeps);
    if (mdocDeps && ctx.path === '/demo/mdl') {
      if (ctx.method === 'GET') return mdlForm(ctx, mdocDeps);
      if (ctx.method === 'POST') return mdlFile(ctx, mdocDeps);
    }
    return next();
  };

  return { credentialIssuer: walletIssuer.credentialIssuer, middleware: compose([pages, walletIssuer.middleware]) };
}
