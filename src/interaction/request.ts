import { EXTERNAL, isIdentityScope, type IdentityScope } from '../rules/scopes.js';
import type { ExternalRequest } from '../external/flows.js';
import { CONTINUATION_PARAMS } from '../external/continue.js';
import type { Interaction, Version } from './deps.js';

/** What the interaction's request asks for: its scope, as oidc-provider holds it (checked at PAR or authorise). */
export interface RequestedFlow {
  kind: 'issuance' | 'verification' | 'identity';
  types: string[];
  identity?: IdentityScope;
  external: boolean;
}

/** The request's scope read back into the flow it names. */
export function requestedFlow(scope: string): RequestedFlow {
  const all = scope.split(' ');
  const external = all.includes(EXTERNAL);
  const scopes = all.filter((s) => s && s !== 'openid' && s !== EXTERNAL);
  const identity = scopes.find(isIdentityScope);
  if (identity) return { kind: 'identity', types: [], identity, external };
  const issue = scopes.find((s) => s.startsWith('issue.'));
  return issue
    ? { kind: 'issuance', types: [issue.slice('issue.'.length)], external }
    : { kind: 'verification', types: scopes, external };
}

/** The request's parameters a continuation in another user agent is checked against and its code minted from. */
export function continuationParams(params: Record<string, unknown>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of CONTINUATION_PARAMS) if (typeof params[name] === 'string') kept[name] = params[name] as string;
  if (typeof params.vc_request_uri === 'string') kept.request_uri = params.vc_request_uri;
  return kept;
}

export function externalRequest(
  version: Version,
  kind: ExternalRequest['kind'],
  params: Record<string, unknown>,
): ExternalRequest {
  return {
    version,
    clientId: String(params.client_id),
    kind,
    pushed: params.vc_site === 'par',
    params: continuationParams(params),
  };
}

/** Version 1 non-PAR: the token response also carries the request's state (D3). */
export const tokenExtrasOf = (params: Record<string, unknown>) =>
  params.vc_site === 'nonpar' && typeof params.state === 'string' ? { state: params.state } : undefined;

/** the flow's root span context, as the edge put it in the request, for the records the flow writes next. */
export const flowOf = (params: Record<string, unknown>) =>
  typeof params.vc_trace === 'string' ? { trace: params.vc_trace } : {};

export const secondsLeft = (interaction: Interaction) => Math.max(1, interaction.exp - Math.floor(Date.now() / 1000));
