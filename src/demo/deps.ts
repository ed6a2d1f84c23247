import { createLocalJWKSet, type JWK, type JWTVerifyGetKey } from 'jose';
import { pickText } from '../i18n/catalogues.js';
import { EXTERNAL, type IdentityScope } from '../rules/scopes.js';
import { webhookTargets } from '../webhooks/queue.js';
import { versionProfiles } from '../oidc/versions.js';
import type { Config, ClientConfig } from '../config/schema.js';
import type { Store } from '../store/types.js';
import type { Action, ActionOutcome } from '../admin/credentials.js';
import type { Profiles } from './flow.js';

export interface DemoRoutesOptions {
  /** the demo PID issuer's identifier (src/demo/pid.ts), when it is mounted: the Verify identity card links to its page */
  pidIssuer?: string;
  /** D18: the operator's status change, offered on an issuance's result (what `npm run admin` and the admin API do) */
  changeStatus?: (serialNumber: string, action: Action) => Promise<ActionOutcome>;
  /** a secret for the status forms' MACs: only a result page this demo rendered can change a status */
  formKey?: string;
  /** the languages the holder pages speak; the forms can ask for one with ui_locales */
  languages?: readonly string[];
  /** the demo hands out mDLs and mdoc PIDs under its test IACA (/demo/mdl): the age check card links there */
  mdocs?: boolean;
}

export interface IdentityFlow {
  scope: IdentityScope;
  label: string;
}

/** What the demo's pages and endpoints work with, each taking the part it uses. */
export interface DemoDeps extends DemoRoutesOptions {
  config: Config;
  store: Store;
  /** the demo's client: the redirect URI {base}/demo/callback and an issuance scope (none: the demo says so) */
  client: ClientConfig | undefined;
  /** {base}/demo/callback */
  callback: string;
  /** {base}/demo/webhook */
  webhookUrl: string;
  /** the client's webhook secrets when its External Client flows' events come to this demo's receiver */
  webhookSecrets: readonly string[] | undefined;
  profiles: Profiles;
  /** the ID-token keys published now, public parts only */
  idTokenKeys: JWTVerifyGetKey;
  /** D12: the identity flows the demo offers: those the client lists and the config has a block for */
  identityFlows: IdentityFlow[];
}

/** `idTokenJwks`: the ID-token keys published now (they change with a rotation, D20), as the JWKS endpoint serves them */
export function demoDeps(
  config: Config,
  store: Store,
  idTokenJwks: () => { keys: JWK[] },
  opts: DemoRoutesOptions,
): DemoDeps {
  const callback = `${config.baseUrl}/demo/callback`;
  const webhookUrl = `${config.baseUrl}/demo/webhook`;
  const client: ClientConfig | undefined = config.clients.find(
    (c) => c.redirectUris.includes(callback) && c.scopes.some((s) => s.startsWith('issue.')),
  );
  // External is offered only when the client's events come to this demo's receiver: otherwise they never arrive here
  const webhookSecrets =
    client?.scopes.includes(EXTERNAL) && client.webhook?.url === webhookUrl
      ? webhookTargets(config.clients).get(client.clientId)?.secrets
      : undefined;
  const pidBlock = config.identity.VerifiedIdentity;
  const otherBlock = config.identity.VerifiedIdentity_Other;
  const identityFlows: IdentityFlow[] = [
    ...(pidBlock && client?.scopes.includes('VerifiedIdentity')
      ? [{ scope: 'VerifiedIdentity' as const, label: 'VerifiedIdentity (PID from your wallet)' }]
      : []),
    ...(otherBlock && client?.scopes.includes('VerifiedIdentity_Other')
      ? [
          {
            scope: 'VerifiedIdentity_Other' as const,
            label: `VerifiedIdentity_Other (${pickText(otherBlock.displayName, 'en')})`,
          },
        ]
      : []),
  ];
  return {
    ...opts,
    config,
    store,
    client,
    callback,
    webhookUrl,
    webhookSecrets,
    profiles: versionProfiles(config.baseUrl, config.versions),
    idTokenKeys: publishedKeys(idTokenJwks),
    identityFlows,
  };
}

/** A key resolver over the keys published now: a local JWKS of their public parts, made again when the set changes. */
function publishedKeys(idTokenJwks: () => { keys: JWK[] }): JWTVerifyGetKey {
  let made: { set: { keys: JWK[] }; jwks: ReturnType<typeof createLocalJWKSet> } | undefined;
  return (header, token) => {
    const set = idTokenJwks();
    if (made?.set !== set)
      made = { set, jwks: createLocalJWKSet({ keys: set.keys.map(({ d, p, q, dp, dq, qi, ...pub }) => pub) }) };
    return made.jwks(header, token);
  };
}

/** The credential types the client may issue. */
export function typesFor(config: Config, c: ClientConfig): Config['credentialTypes'] {
  return config.credentialTypes.filter((t) => c.scopes.includes(`issue.${t.name}`));
}
