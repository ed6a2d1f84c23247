import type { ClientConfig, Config, CredentialType } from '../config/schema.js';
import { invalidRequest, invalidScope } from '../rules/errors.js';
import { parseScope, type ScopeRequest } from '../rules/scopes.js';
import {
  checkResponseMode,
  checkResponseType,
  checkRedirectUri,
  checkNonce,
  checkState,
} from '../rules/authorizationParams.js';
import { matchTemplate } from '../rules/template.js';
import { ProtocolError } from '../rules/errors.js';
import type { PinHasher, StoredPin } from '../rules/pinHash.js';
import { checkPkce } from '../rules/pkce.js';
import { verifyIdTokenHint, type VerifiedHint } from '../rules/idTokenHint.js';
import { checkPinRule } from '../rules/pin.js';
import type { VersionProfile } from './versions.js';
import type { Store } from '../store/types.js';
import type { OutboundFetch } from '../http/outboundFetch.js';
import type { Registrations } from '../verification/registration.js';

/** Where an authorization request arrives: pushed (PAR), or as authorise query parameters. */
export type RequestSite = 'par' | 'authorize' | 'authorizeNonPar';

export interface RequestContext {
  client: ClientConfig;
  profile: VersionProfile;
  config: Config;
  credentialTypes: ReadonlyMap<string, CredentialType>;
  site: RequestSite;
  pinHasher: PinHasher;
  outbound: OutboundFetch;
  /** ETSI TS 119 475: the clients' registration certificates */
  registrations?: Registrations;
}

export interface CheckedRequest {
  scope: ScopeRequest;
  /** the parameters handed to oidc-provider: hint taken out of its way, PKCE in its S256 form */
  providerParams: Record<string, string>;
  hint?: VerifiedHint;
  /** issuance: the hint's replay record, which `registerHint` writes once every check has passed */
  hintRegistration?: HintRegistration;
}

/**
 * A verified hint's two records: its replay marker, kept until the hint expires (D7: a hint backs at most
 * one credential), and what it carries to the authorise step, kept only as long as that flow may take.
 * The PAR request (or the authorise query) holds only a reference to the latter, `vc_hint`, so requests
 * stay small however large the attributes are (images).
 */
export interface HintRegistration {
  replayKey: string;
  replayTtl: number;
  dataKey: string;
  data: HintRecord;
  dataTtl: number;
}

/** What a verified hint carries to the authorise step. Never the PIN itself. */
export interface HintRecord {
  clientId: string;
  /** the attributes, when they match the credential template */
  attributes?: Record<string, unknown>;
  /** why they do not: the authorise step redirects with it (spec: TokenHint claims -> invalid_scope) */
  templateError?: string;
  pin?: StoredPin;
}

/**
 * D7: the replay marker is written once, atomically, with the hint's data beside it (never beside a marker
 * that existed), and a second use of the hint is refused. The caller
 * registers after every other check, so that a request failing another check does not burn its hint.
 */
export async function registerHint(store: Store, registration: HintRegistration | undefined): Promise<void> {
  if (!registration) return;
  const { replayKey, replayTtl, dataKey, data, dataTtl } = registration;
  const holder: HintHolder = { hint: data };
  if (!(await store.setIfAbsentWith(replayKey, 1, replayTtl, { key: dataKey, value: holder, ttlSeconds: dataTtl })))
    throw hintReplayed();
}

/**
 * D7 for a caller that keeps the hint's data in a record of its own (the edge's pushed request): only the
 * replay marker, written once; the caller writes its record only after this returned.
 */
export async function claimHint(store: Store, registration: HintRegistration): Promise<void> {
  if (!(await store.setIfAbsent(registration.replayKey, 1, registration.replayTtl))) throw hintReplayed();
}

const hintReplayed = () => invalidRequest('id_token_hint has already been used: each hint backs one credential');

/** A record that carries a verified hint's data (its own record, or a pushed request): what `vc_hint` names. */
export interface HintHolder {
  hint?: HintRecord;
}

/** Parameters only the edge may set: stripped from every incoming request, passed to oidc-provider as its `extraParams`. */
export const INTERNAL_PARAMS = ['vc_hint', 'vc_site', 'vc_request_uri', 'vc_trace'];

/** Takes the edge's own parameters out of a request a client sent. */
export function stripInternal(params: Record<string, string>): Record<string, string> {
  for (const name of INTERNAL_PARAMS) delete params[name];
  return params;
}

function pkcePolicy(r: RequestContext): { required: boolean; methods: readonly ('S256' | 'plain')[] } | 'refuse' {
  if (r.site === 'authorizeNonPar') return { required: true, methods: r.client.pkceMethods }; // Version 1 non-PAR: PKCE required
  if (!r.profile.pkceAtPar && r.site === 'par') return 'refuse'; // Version 1 PAR has no code_challenge
  return { required: r.client.pkce === 'required', methods: r.client.pkceMethods };
}

/**
 * The checks the spec makes when a request is made (PAR errors table; for non-PAR requests, the same
 * checks at authorise, D6), in the order a developer fixes them: response type and mode, redirect URI,
 * scope, nonce and state, PKCE, then the `id_token_hint` and its PIN (D4, D7). The spec places the
 * template and image checks at the authorise step (src/interaction): the template is matched here all the
 * same, before anything walks the hint's claims (a claim may be nested thousands of levels deep), and
 * its verdict is what the authorise step reports. Nothing is written: the caller registers the hint.
 */
export async function checkAuthorizationRequest(
  params: Record<string, string>,
  r: RequestContext,
): Promise<CheckedRequest> {
  const nonPar = r.site !== 'par';
  checkResponseType(params.response_type);
  checkResponseMode(params.response_mode);
  checkRedirectUri(params.redirect_uri, r.client.redirectUris);
  const scope = parseScope(params.scope, {
    issuanceOpenid: r.profile.issuanceOpenid,
    externalFlows: r.profile.externalFlows,
    clientScopes: r.client.scopes,
    credentialTypes: [...r.credentialTypes.keys()],
    verifyOnlyTypes: [...r.credentialTypes.values()].filter((t) => t.verifyOnly).map((t) => t.name),
  });
  if (r.site === 'authorizeNonPar' && scope.kind === 'issuance') {
    throw invalidScope(
      'scope: issuance is not available at /oidc/authorizev1 (Version 1 non-PAR is for verification); use PAR',
    );
  }
  checkNonce(params.nonce, nonPar, r.config.maxParameterLength);
  checkState(params.state, r.config.maxParameterLength, scope.external);

  const providerParams: Record<string, string> = { ...params };
  delete providerParams.id_token_hint;
  if (r.site === 'authorizeNonPar') providerParams.vc_site = 'nonpar'; // its token response carries state (D3)
  // D13: a pushed External Client flow is continued with its request_uri, which the continuation compares;
  // D12: a pushed second-provider journey has no context_id (the spec gives it to non-PAR journeys)
  if (r.site === 'par' && (scope.external || (scope.kind === 'identity' && scope.flow === 'VerifiedIdentity_Other')))
    providerParams.vc_site = 'par';
  if (r.profile.issuanceOpenid === 'forbidden' && scope.kind === 'issuance') {
    providerParams.scope = ['openid', ...scope.scopes].join(' '); // oidc-provider issues ID tokens for openid requests only
  }

  const policy = pkcePolicy(r);
  if (policy === 'refuse') {
    if (params.code_challenge !== undefined || params.code_challenge_method !== undefined) {
      throw invalidRequest('code_challenge: Version 1 PAR does not take PKCE parameters; use Version 2 for PKCE');
    }
  } else {
    const pkce = checkPkce(params, policy);
    if (pkce) Object.assign(providerParams, pkce);
  }

  if (scope.kind !== 'issuance') {
    if (params.id_token_hint !== undefined)
      throw invalidRequest('id_token_hint: only issuance requests carry an id_token_hint');
    // ARF RPRC_21: a presentation request beyond the relying party's registration is refused here, not by the wallet
    if (scope.kind === 'verification')
      r.registrations?.checkRequest(r.client.clientId, { credentialTypes: scope.credentialTypes });
    if (scope.kind === 'identity' && scope.flow === 'VerifiedIdentity')
      r.registrations?.checkRequest(r.client.clientId, { identity: 'VerifiedIdentity' });
    return { scope, providerParams };
  }

  const { hint, hintRegistration } = await checkHint(params, r, scope.credentialType, providerParams);
  return { scope, providerParams, hint, hintRegistration };
}

/**
 * Issuance: the id_token_hint verified, its PIN against the type's PIN rule, its attributes against the
 * template (a mismatch is kept for the authorise step to report); `vc_hint` names the data's record.
 */
async function checkHint(
  params: Record<string, string>,
  r: RequestContext,
  credentialType: string,
  providerParams: Record<string, string>,
): Promise<{ hint: VerifiedHint; hintRegistration: HintRegistration }> {
  const type = r.credentialTypes.get(credentialType)!;
  if (params.id_token_hint === undefined) throw invalidRequest('id_token_hint is required for issuance');
  const hint = await verifyIdTokenHint(params.id_token_hint, {
    client: {
      clientId: r.client.clientId,
      clientSecret: r.client.clientSecret,
      jwks: r.client.hintKeys?.jwks as { keys: Record<string, unknown>[] } | undefined,
      jwksUri: r.client.hintKeys?.jwksUri,
    },
    audience: r.profile.issuer,
    clockTolerance: r.config.hint.clockTolerance,
    maxLength: r.config.hint.maxLength,
    maxLifetime: r.config.hint.maxLifetime,
    outbound: r.outbound,
  });
  const pin = checkPinRule(hint.pinCode, type.pinCodeLength);
  // one hash tag for the marker and its data: they are written in one atomic step
  const replayKey = `hint:{${r.client.clientId}:${hint.replayKey}}`;
  const data: HintRecord = { clientId: r.client.clientId, ...(pin ? { pin: r.pinHasher.hash(pin, replayKey) } : {}) };
  try {
    matchTemplate(hint.attributes, type);
    data.attributes = hint.attributes;
  } catch (err) {
    if (!(err instanceof ProtocolError)) throw err;
    data.templateError = err.description;
  }
  const { lifetimes, hint: hintRules } = r.config;
  const dataKey = `${replayKey}:data`;
  providerParams.vc_hint = dataKey;
  return {
    hint,
    hintRegistration: {
      replayKey,
      replayTtl: Math.max(1, hint.exp - Math.floor(Date.now() / 1000) + hintRules.clockTolerance),
      dataKey,
      data,
      dataTtl: lifetimes.par + lifetimes.interaction,
    },
  };
}
