import type { z } from 'zod';
import { credentialExpiry } from '../../rules/validity.js';
import { batchSizeOf, MIN_BATCH_VALIDITY_SECONDS } from '../../rules/batch.js';
import { isLoopbackHost } from '../../rules/loopback.js';
import { EXTERNAL, isIdentityScope } from '../../rules/scopes.js';
import { vctFor } from '../../issuance/credentialConfigurations.js';
import { isOwnVct, PID_ANCHOR_TYPE } from '../../keys/trustAnchors.js';
import type { Config, CredentialType } from '../schema.js';
import { VC_ISSUER_CLAIM } from './clients.js';

/** Rules that tie one part of the configuration to another, each adding its issues to `ctx`. */

/** Every instance must publish a rotated key before it signs with it. */
export function checkKeyRotation(cfg: Config, ctx: z.RefinementCtx): void {
  const { activateAfter, reloadInterval } = cfg.keys.rotation;
  const now = new Date();
  if (credentialExpiry(activateAfter, now).getTime() - now.getTime() < 2 * reloadInterval * 1000) {
    ctx.addIssue({
      code: 'custom',
      path: ['keys', 'rotation', 'activateAfter'],
      message: `must be at least twice keys.rotation.reloadInterval (${reloadInterval} s): every instance must publish a new key before it signs`,
    });
  }
}

/** Required wallet attestations need a provider to trust. */
export function checkWalletAttestation(cfg: Config, ctx: z.RefinementCtx): void {
  if (cfg.walletAttestation.required && cfg.walletAttestation.trustedProviders.length === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['walletAttestation', 'trustedProviders'],
      message: 'must name at least one wallet provider when walletAttestation.required is true',
    });
  }
}

/** Unique type names, trusted key attestations, image-only attribute settings. */
export function checkCredentialTypes(cfg: Config, ctx: z.RefinementCtx): void {
  const types = new Set<string>();
  cfg.credentialTypes.forEach((t, i) => {
    if (t.keyAttestation === 'required' && cfg.walletAttestation.trustedProviders.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['credentialTypes', i, 'keyAttestation'],
        message:
          'required needs walletAttestation.trustedProviders: the wallet providers whose key attestations are trusted',
      });
    }
    checkBatchValidity(t, i, cfg.issuance.batchSize, ctx);
    if (t.keyAttestationLevels && t.keyAttestation !== 'required')
      ctx.addIssue({
        code: 'custom',
        path: ['credentialTypes', i, 'keyAttestationLevels'],
        message: 'needs keyAttestation: required (the levels are those of the key attestation every proof must carry)',
      });
    if (types.has(t.name))
      ctx.addIssue({
        code: 'custom',
        path: ['credentialTypes', i, 'name'],
        message: `duplicate credential type ${t.name}`,
      });
    types.add(t.name);
    for (const [name, attr] of Object.entries(t.attributes)) {
      if (attr.type !== 'image' && (attr.formats || attr.maxBytes)) {
        ctx.addIssue({
          code: 'custom',
          path: ['credentialTypes', i, 'attributes', name],
          message: 'formats and maxBytes apply to image attributes only',
        });
      }
      // ISO/IEC 18013-5 §7.2.5: age_over_NN is a boolean, and the PID Rulebook's mdoc encoding says the same
      if (t.mdoc && AGE_OVER.test(name) && attr.type !== 'boolean') {
        ctx.addIssue({
          code: 'custom',
          path: ['credentialTypes', i, 'attributes', name, 'type'],
          message: `must be boolean: ${name} is a boolean element of an mdoc (ISO/IEC 18013-5 §7.2.5)`,
        });
      }
    }
    if (t.verifyOnly) checkVerifyOnly(cfg, t, i, ctx);
  });
}

/** ISO/IEC 18013-5 §7.2.5: age_over_NN, NN two digits */
const AGE_OVER = /^age_over_\d{2}$/;

/**
 * A type verified only must be askable in some form: an mdoc, which an mso_mdoc anchor vouches for, or an
 * SD-JWT VC of another issuer's vct (one of our own vct would come only from our issuer, which never issues it).
 */
function checkVerifyOnly(cfg: Config, t: CredentialType, i: number, ctx: z.RefinementCtx): void {
  const foreignVct = t.vct !== undefined && !isOwnVct(t.vct, cfg.baseUrl);
  if (!t.mdoc && !foreignVct) {
    ctx.addIssue({
      code: 'custom',
      path: ['credentialTypes', i, 'verifyOnly'],
      message: `${t.name} is verified only, so it needs an mdoc (doctype and namespace) or the vct of the issuer whose SD-JWT VCs it takes; ${t.vct ? "its vct is this service's own" : 'it has neither'}`,
    });
  }
  if (t.mdoc && !foreignVct && !mdocAnchorFor(cfg, t.name)) {
    ctx.addIssue({
      code: 'custom',
      path: ['credentialTypes', i, 'mdoc'],
      message: `${t.name} is verified only: no verifier.trustAnchors entry of format mso_mdoc vouches for it (list its issuers' IACAs there, with types [${t.name}] or no types)`,
    });
  }
}

/** Whether some trust anchor of format mso_mdoc may vouch for the type (the single-file form vouches for every mdoc type). */
function mdocAnchorFor(cfg: Config, name: string): boolean {
  const anchors = cfg.verifier.trustAnchors;
  if (anchors === undefined) return false;
  if (typeof anchors === 'string') return true;
  return anchors.some((a) => a.formats.includes('mso_mdoc') && (a.types === undefined || a.types.includes(name)));
}

/**
 * A batch's timestamps are whole hours (ARF ISSU_36, src/rules/batch.ts): a batch type's credentials, and its
 * mdocs, must be valid for at least two hours, so that the rounded expiry is still ahead.
 */
function checkBatchValidity(t: CredentialType, i: number, defaultSize: number, ctx: z.RefinementCtx): void {
  if (batchSizeOf(t, defaultSize) < 2) return;
  const now = new Date();
  const lasts = (duration: string) => credentialExpiry(duration, now).getTime() - now.getTime();
  const message = `must be at least PT2H for a type issued in batches (batchSize ${batchSizeOf(t, defaultSize)}): its timestamps are rounded to whole hours`;
  if (lasts(t.validity) < MIN_BATCH_VALIDITY_SECONDS * 1000)
    ctx.addIssue({ code: 'custom', path: ['credentialTypes', i, 'validity'], message });
  const mdocValidity = t.mdoc?.irrevocableValidity;
  if (mdocValidity && lasts(mdocValidity) < MIN_BATCH_VALIDITY_SECONDS * 1000)
    ctx.addIssue({ code: 'custom', path: ['credentialTypes', i, 'mdoc', 'irrevocableValidity'], message });
}

/** A trust anchor's types must be configured, and verifiable in one of the anchor's formats. */
export function checkTrustAnchors(cfg: Config, ctx: z.RefinementCtx, byName: Map<string, CredentialType>): void {
  const anchors = cfg.verifier.trustAnchors;
  if (Array.isArray(anchors)) {
    anchors.forEach((a, i) =>
      a.types?.forEach((name, j) => {
        const type = byName.get(name);
        const path = ['verifier', 'trustAnchors', i, 'types', j];
        // D12: the PID's IACAs are named for the identity flow, which takes them for its mdoc form alone
        if (name === PID_ANCHOR_TYPE && !type) {
          if (!cfg.identity.VerifiedIdentity?.mdoc)
            ctx.addIssue({
              code: 'custom',
              path,
              message: `${PID_ANCHOR_TYPE} takes IACAs only when identity.VerifiedIdentity.mdoc asks for the PID as an mdoc`,
            });
          else if (!a.formats.includes('mso_mdoc'))
            ctx.addIssue({
              code: 'custom',
              path,
              message: `${PID_ANCHOR_TYPE} takes IACAs of the PID's mdoc form only: this entry needs formats [mso_mdoc]`,
            });
          return;
        }
        if (!type) return ctx.addIssue({ code: 'custom', path, message: `unknown credential type ${name}` });
        const own = isOwnVct(vctFor(type, cfg.baseUrl.replace(/\/+$/, '')), cfg.baseUrl);
        const usable =
          (a.formats.includes('dc+sd-jwt') && !own) || (a.formats.includes('mso_mdoc') && type.mdoc !== undefined);
        if (!usable) {
          ctx.addIssue({
            code: 'custom',
            path,
            message: `this anchor cannot vouch for ${name}: ${own ? "its vct is this service's own, so its SD-JWT VCs come only from this service's issuer or trustedIssuers" : 'it is not asked for as dc+sd-jwt here'}${a.formats.includes('mso_mdoc') ? ', and it has no mdoc' : ''}`,
          });
        }
      }),
    );
  }
  // D12: an mdoc PID is trusted through the IACAs named for it, never through anchors of other types
  const pid = cfg.identity.VerifiedIdentity;
  if (
    pid?.mdoc &&
    !(
      Array.isArray(anchors) &&
      anchors.some((a) => a.formats.includes('mso_mdoc') && a.types?.includes(PID_ANCHOR_TYPE))
    )
  ) {
    ctx.addIssue({
      code: 'custom',
      path: ['identity', 'VerifiedIdentity', 'mdoc'],
      message: `no verifier.trustAnchors entry names ${PID_ANCHOR_TYPE} in its types: list the PID providers' IACAs as { certificates: <file>, formats: [mso_mdoc], types: [${PID_ANCHOR_TYPE}] }`,
    });
  }
}

/** Unique client ids; every listed scope is a configured type, identity flow or External (with a webhook). */
export function checkClients(cfg: Config, ctx: z.RefinementCtx, byName: Map<string, CredentialType>): void {
  const ids = new Set<string>();
  cfg.clients.forEach((c, i) => {
    if (ids.has(c.clientId))
      ctx.addIssue({ code: 'custom', path: ['clients', i, 'clientId'], message: `duplicate client ${c.clientId}` });
    ids.add(c.clientId);
    // ETSI TS 119 475: a registration certificate is checked against the registrars' anchors
    if (c.registration && !cfg.verifier.registrars) {
      ctx.addIssue({
        code: 'custom',
        path: ['verifier', 'registrars'],
        message: `is required: clients[${i}] (${c.clientId}) has a registration certificate, which a registrar's anchor must vouch for`,
      });
    }
    if (c.scopes.includes(EXTERNAL) && !c.webhook) {
      ctx.addIssue({
        code: 'custom',
        path: ['clients', i, 'webhook'],
        message: `is required: the client lists the scope ${EXTERNAL}`,
      });
    }
    c.scopes.forEach((s, j) => {
      if (c.vcIssuerClaim && byName.get(s)?.attributes[VC_ISSUER_CLAIM]) {
        ctx.addIssue({
          code: 'custom',
          path: ['clients', i, 'vcIssuerClaim'],
          message: `the type ${s} has an attribute named ${VC_ISSUER_CLAIM}, the claim this setting adds`,
        });
      }
      if (s === EXTERNAL) return;
      if (isIdentityScope(s)) {
        if (!cfg.identity[s])
          ctx.addIssue({
            code: 'custom',
            path: ['identity', s],
            message: `is required: clients[${i}] lists the scope ${s}`,
          });
        return;
      }
      const name = s.startsWith('issue.') ? s.slice('issue.'.length) : s;
      if (!byName.has(name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['clients', i, 'scopes', j],
          message: `unknown credential type ${name}`,
        });
      } else if (s.startsWith('issue.') && byName.get(name)!.verifyOnly) {
        ctx.addIssue({
          code: 'custom',
          path: ['clients', i, 'scopes', j],
          message: `${name} is verified only (verifyOnly): this service does not issue it; list the scope ${name} to verify it`,
        });
      }
    });
  });
}

/**
 * The demo publishes its secrets (config/demo.yaml) and its PID issuer signs whatever a visitor asks: on a
 * base URL other than this machine it is refused unless the operator says so (`demoOnPublicUrl`).
 */
export function checkDemo(cfg: Config, ctx: z.RefinementCtx): void {
  if (!cfg.demo || cfg.demoOnPublicUrl) return;
  const host = new URL(cfg.baseUrl).hostname;
  if (isLoopbackHost(host)) return;
  ctx.addIssue({
    code: 'custom',
    path: ['demo'],
    message: `is true on a base URL that is not this machine (${host}): the demo's secrets are published and its PID issuer signs whatever a visitor asks. Use a localhost base URL, or set demoOnPublicUrl: true (DEMO_ON_PUBLIC_URL=true with config/demo.yaml) to serve it there anyway, never in production`,
  });
}

export function checkConfig(cfg: Config, ctx: z.RefinementCtx): void {
  checkDemo(cfg, ctx);
  checkKeyRotation(cfg, ctx);
  checkWalletAttestation(cfg, ctx);
  checkCredentialTypes(cfg, ctx);
  const byName = new Map(cfg.credentialTypes.map((t) => [t.name, t]));
  checkTrustAnchors(cfg, ctx, byName);
  checkClients(cfg, ctx, byName);
}
