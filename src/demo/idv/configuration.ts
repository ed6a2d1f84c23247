import { randomBytes } from 'node:crypto';
import type {
  Account,
  ClaimsParameterMember,
  Configuration,
  KoaContextWithOIDC,
  interactionPolicy,
} from 'oidc-provider';
import { sendPage } from '../../http/page.js';
import { idvCsp, renderIdvMessage, type PersonFields } from '../idvPages.js';
import type { DemoIdvOptions } from '../idvProvider.js';
import type { People } from './people.js';

const PERSON_CLAIMS = ['given_name', 'family_name', 'birthdate'] as const;
/** What the `verified_claims` say was checked (a made-up trust framework: nothing is). */
const VERIFICATION = { trust_framework: 'demo' };

/**
 * The provider's settings that depend on nothing of an instance: plain data, cloned for each provider
 * (oidc-provider keeps parts of the objects it is given).
 */
const SETTINGS = {
  clientAuthMethods: ['client_secret_basic', 'client_secret_post'],
  cookies: {
    names: { session: '_demo_idv_session', interaction: '_demo_idv_interaction', resume: '_demo_idv_resume' },
    long: { signed: true, httpOnly: true, sameSite: 'lax' },
    short: { signed: true, httpOnly: true, sameSite: 'lax' },
  },
  features: {
    devInteractions: { enabled: false },
    claimsParameter: { enabled: true },
    userinfo: { enabled: true },
    rpInitiatedLogout: { enabled: false },
  },
  // the person's claims in the ID token too, not only at userinfo (the service reads either)
  conformIdTokenClaims: false,
  responseTypes: ['code'],
  ttl: { AuthorizationCode: 60, AccessToken: 300, IdToken: 300, Interaction: 600, Session: 600, Grant: 600 },
} satisfies Configuration;

export interface IdvConfigurationDeps {
  opts: DemoIdvOptions;
  issuer: string;
  signingKey: Record<string, unknown>;
  policy: readonly interactionPolicy.Prompt[];
  people: People;
  /** origins the pages' forms may end at (the clients' redirect URIs') */
  formTargets: readonly string[];
}

/** The oidc-provider configuration: SETTINGS, and the clients, keys, claims and pages of this instance. */
export function idvConfiguration(d: IdvConfigurationDeps): Configuration {
  const { opts, issuer, people, formTargets } = d;
  const settings = structuredClone(SETTINGS);
  return {
    ...settings,
    clients: opts.clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      redirect_uris: c.redirectUris,
      response_types: ['code'],
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: c.clientAuth,
    })),
    // the clients are confidential: no browser calls the token or userinfo endpoints
    clientBasedCORS: () => false,
    jwks: { keys: [d.signingKey] } as Configuration['jwks'],
    cookies: { keys: [randomBytes(32).toString('base64url')], ...settings.cookies },
    claims: {
      openid: ['sub'],
      profile: [...PERSON_CLAIMS],
      ...(opts.verifiedClaims ? { verified_claims: null } : {}),
    },
    discovery: opts.verifiedClaims
      ? {
          verified_claims_supported: true,
          trust_frameworks_supported: [VERIFICATION.trust_framework],
          claims_in_verified_claims_supported: [...PERSON_CLAIMS],
        }
      : {},
    pkce: { required: () => true },
    interactions: {
      url: (_ctx: KoaContextWithOIDC, interaction: { uid: string }) => `${issuer}/interaction/${interaction.uid}`,
      policy: d.policy,
    },
    findAccount: async (_ctx: KoaContextWithOIDC, sub: string): Promise<Account | undefined> => {
      const person = people.get(sub);
      if (!person) return undefined;
      return {
        accountId: sub,
        claims: (_use: string, _scope: string, requested: Record<string, null | ClaimsParameterMember>) => ({
          sub,
          ...person,
          ...(opts.verifiedClaims ? { verified_claims: verifiedClaims(person, requested?.verified_claims) } : {}),
        }),
      };
    },
    renderError: async (ctx: KoaContextWithOIDC, out: { error?: string; error_description?: string }) => {
      sendPage(
        ctx,
        ctx.status,
        (nonce) =>
          renderIdvMessage({
            nonce,
            title: 'This identity check cannot go on',
            message: `${out.error ?? 'error'}: ${out.error_description ?? 'something went wrong'}`,
          }),
        (nonce) => idvCsp(nonce, formTargets),
      );
    },
  } as Configuration;
}

/** `verified_claims` for the person: the requested claims of the three (all when none are named). */
function verifiedClaims(person: PersonFields, requested: null | ClaimsParameterMember | undefined) {
  const asked =
    requested && typeof requested.claims === 'object' && requested.claims !== null
      ? Object.keys(requested.claims)
      : PERSON_CLAIMS;
  const claims: Record<string, string> = {};
  for (const name of PERSON_CLAIMS) if (asked.includes(name)) claims[name] = person[name];
  return { verification: { ...VERIFICATION }, claims };
}
