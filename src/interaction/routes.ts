import { randomBytes, randomUUID } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import type Provider from 'oidc-provider';
import QRCode from 'qrcode';
import type { ClientConfig, Config, CredentialType } from '../config/schema.js';
import type { Store } from '../store/types.js';
import { ProtocolError } from '../rules/errors.js';
import { matchTemplate } from '../rules/template.js';
import { validateImages } from '../rules/images.js';
import type { HintRecord } from '../oidc/requestChecks.js';
import type { WalletIssuer } from '../issuance/walletIssuer.js';
import { renderPrompt } from './views/prompt.js';
import { renderMessage } from './views/message.js';
import { flowClaimsKey, HOLDER_ACCOUNT, type FlowClaims } from './flowClaims.js';
import { credentialExpiry } from '../issuance/validity.js';

export interface InteractionDeps {
  config: Config;
  store: Store;
  providers: Record<'v1' | 'v2', Provider>;
  walletIssuer: WalletIssuer;
  clients: ReadonlyMap<string, ClientConfig>;
  credentialTypes: ReadonlyMap<string, CredentialType>;
}

/** What the prompt remembers about its wallet step, keyed by the interaction. */
interface PromptRecord {
  kind: 'issuance';
  clientId: string;
  credentialType: string;
  walletUri: string;
  expiresAt: number;
  pinLength?: number;
  flow: FlowClaims;
}

const promptKey = (version: string, uid: string) => `prompt:${version}:${uid}`;

const CSP = (nonce: string) =>
  `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

function page(ctx: Context, status: number, render: (nonce: string) => string): void {
  const nonce = randomBytes(16).toString('base64');
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', CSP(nonce));
  ctx.set('Cache-Control', 'no-store');
  ctx.body = render(nonce);
}

function messagePage(ctx: Context, status: number, title: string, message: string): void {
  page(ctx, status, (nonce) => renderMessage({ nonce, title, message, status }));
}

/** The request's scope, as oidc-provider holds it, read back into the flow it asks for. */
function issuanceTypeOf(scope: string): string | undefined {
  return scope.split(' ').find((s) => s.startsWith('issue.'))?.slice('issue.'.length);
}

/**
 * The prompt (D10): the authorise step's interaction. For issuance it checks the hint against the
 * credential template (spec: PAR authorise errors, TokenHint claims and image rows), mints the wallet
 * offer, shows it, reports progress, and when the wallet step is over returns the browser to
 * oidc-provider, which redirects to the client with a code, or with the error.
 */
export function createInteractionRoutes(d: InteractionDeps): Middleware {
  const { config, store } = d;

  async function details(ctx: Context, version: 'v1' | 'v2', uid: string) {
    try {
      const found = await d.providers[version].interactionDetails(ctx.req, ctx.res);
      return found.uid === uid ? found : undefined;
    } catch {
      return undefined;
    }
  }

  async function finish(ctx: Context, version: 'v1' | 'v2', result: Record<string, unknown>): Promise<void> {
    await d.providers[version].interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
    ctx.respond = false;
  }

  /** Checks made at the authorise step, then the offer; an error goes back to the client by redirect. */
  async function startIssuance(version: 'v1' | 'v2', uid: string, params: Record<string, unknown>): Promise<PromptRecord> {
    const typeName = issuanceTypeOf(String(params.scope ?? ''))!;
    const type = d.credentialTypes.get(typeName)!;
    const hint = await store.get<HintRecord>(String(params.vc_hint));
    if (!hint || hint.clientId !== params.client_id) throw new ProtocolError('invalid_request', 'id_token_hint: the request has expired; start again');
    const { attributes, pin } = hint;
    matchTemplate(attributes, type); // invalid_scope (spec: TokenHint claims row)
    validateImages(attributes, type); // invalid_request (spec: TokenHint image row)
    const serialNumber = randomUUID();
    const expiresAt = credentialExpiry(type.validity, new Date());
    const offer = await d.walletIssuer.createOffer({
      offerId: `${version}.${uid}`,
      credentialType: type.name,
      attributes,
      pin,
      serialNumber,
      credentialExpiresAt: expiresAt,
    });
    return {
      kind: 'issuance',
      clientId: String(params.client_id),
      credentialType: type.name,
      walletUri: offer.offerUri,
      expiresAt: offer.expiresAt * 1000,
      pinLength: pin?.length,
      flow: {
        sub: serialNumber, // D2: issuance sub = SerialNumber
        claims: { ...attributes, SerialNumber: serialNumber, ExpiresAt: expiresAt.toISOString().replace(/\.\d{3}Z$/, 'Z') },
      },
    };
  }

  async function prompt(ctx: Context, version: 'v1' | 'v2', uid: string): Promise<void> {
    const found = await details(ctx, version, uid);
    if (!found) {
      return messagePage(ctx, 400, 'This link has expired', 'This request has expired or was opened in another browser. Go back to the app and start again.');
    }
    let record = await store.get<PromptRecord>(promptKey(version, uid));
    if (!record) {
      const params = found.params as Record<string, unknown>;
      if (!issuanceTypeOf(String(params.scope ?? ''))) {
        return finish(ctx, version, { error: 'access_denied', error_description: 'verification is not available yet on this service' });
      }
      try {
        record = await startIssuance(version, uid, params);
      } catch (err) {
        if (err instanceof ProtocolError) return finish(ctx, version, { error: err.error, error_description: err.description });
        throw err;
      }
      await store.set(promptKey(version, uid), record, config.lifetimes.interaction);
    }
    const client = d.clients.get(record.clientId);
    const type = d.credentialTypes.get(record.credentialType)!;
    const qrSvg = await QRCode.toString(record.walletUri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
    const base = `${config.baseUrl}/interaction/${version}/${uid}`;
    page(ctx, 200, (nonce) =>
      renderPrompt({
        nonce,
        kind: 'issuance',
        clientName: client?.clientName ?? record.clientId,
        credentialTypes: [{ name: type.name, displayName: type.displayName, attributes: Object.keys(type.attributes) }],
        walletUri: record.walletUri,
        qrSvg,
        pin: record.pinLength ? { length: record.pinLength } : undefined,
        statusUrl: `${base}/status`,
        continueUrl: `${base}/continue`,
        expiresAt: record.expiresAt,
      }),
    );
  }

  async function status(ctx: Context, version: 'v1' | 'v2', uid: string): Promise<void> {
    ctx.set('Cache-Control', 'no-store');
    const record = await store.get<PromptRecord>(promptKey(version, uid));
    if (!record) {
      ctx.status = 404;
      ctx.body = { status: 'expired', message: 'This request has expired. Go back to the app and start again.' };
      return;
    }
    ctx.body = await d.walletIssuer.offerStatus(`${version}.${uid}`);
  }

  async function continueFlow(ctx: Context, version: 'v1' | 'v2', uid: string): Promise<void> {
    const found = await details(ctx, version, uid);
    const record = await store.get<PromptRecord>(promptKey(version, uid));
    if (!found || !record) {
      return messagePage(ctx, 400, 'This link has expired', 'This request has expired or was opened in another browser. Go back to the app and start again.');
    }
    const state = await d.walletIssuer.offerStatus(`${version}.${uid}`);
    if (state.status === 'failed' || state.status === 'expired') {
      await store.delete(promptKey(version, uid));
      return finish(ctx, version, {
        error: 'access_denied',
        error_description: state.status === 'expired' ? 'the credential offer expired before the wallet accepted it' : (state.message ?? 'the wallet step failed'),
      });
    }
    if (state.status !== 'done') {
      ctx.redirect(`${config.baseUrl}/interaction/${version}/${uid}`);
      return;
    }
    const provider = d.providers[version];
    const grant = new provider.Grant({ accountId: HOLDER_ACCOUNT, clientId: record.clientId });
    grant.addOIDCScope(String(found.params.scope));
    const grantId = await grant.save();
    await store.set(flowClaimsKey(version, grantId), record.flow, config.lifetimes.code + config.lifetimes.token);
    await store.delete(promptKey(version, uid));
    return finish(ctx, version, { login: { accountId: HOLDER_ACCOUNT, remember: false }, consent: { grantId }, wallet: true });
  }

  const pattern = /^\/interaction\/(v1|v2)\/([A-Za-z0-9_-]{1,64})(\/status|\/continue)?$/;
  return async function interactionRoutes(ctx, next) {
    const m = pattern.exec(ctx.path);
    if (!m) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.status = 405;
      ctx.set('Allow', 'GET');
      return;
    }
    const [, version, uid, action] = m as unknown as [string, 'v1' | 'v2', string, string | undefined];
    if (action === '/status') return status(ctx, version, uid);
    if (action === '/continue') return continueFlow(ctx, version, uid);
    return prompt(ctx, version, uid);
  };
}
