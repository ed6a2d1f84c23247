/**
 * Issue 22 (what a newcomer hit): the prompt shows the config's attribute labels ("E-mail" where the
 * config says so), and an issuance lists only the attributes the hint carried, not every declared one.
 * Issue 36 §1: a verification prompt lists the required attributes, then apart the optional ones ("and if
 * your credential has them"); a VerifiedIdentity prompt includes the subject claim it asks for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, SECRETS, REDIRECT, testConfig, type TestService } from '../helpers/service.js';
import { Browser } from '../helpers/rp.js';
import { testPidIssuer } from '../helpers/pid.js';
import { openPrompt, pushIssuance } from '../helpers/flows.js';

let t: TestService;
beforeAll(async () => {
  const types = testConfig(0).credentialTypes as {
    name: string;
    attributes: Record<string, Record<string, unknown>>;
  }[];
  const labelled = types.map((type) =>
    type.name === 'EmployeeBadge'
      ? {
          ...type,
          attributes: {
            ...type.attributes,
            FirstName: { ...type.attributes.FirstName, label: 'Given name' },
            Email: { ...type.attributes.Email, label: 'E-mail' },
          },
        }
      : type,
  );
  const pidIssuer = await testPidIssuer('https://pid.test');
  const clients = (testConfig(0).clients as { clientId: string; scopes: string[] }[]).map((c) =>
    c.clientId === 'issuer-pkce' ? { ...c, scopes: [...c.scopes, 'VerifiedIdentity'] } : c,
  );
  t = await startTestService({
    credentialTypes: labelled,
    clients,
    identity: {
      VerifiedIdentity: {
        claims: ['given_name', 'family_name'],
        optionalClaims: ['nationalities', 'birthdate'],
        subjectClaim: 'personal_administrative_number',
        trustedIssuers: [{ issuer: pidIssuer.issuer, jwks: pidIssuer.jwks }],
      },
    },
  });
});
afterAll(async () => t?.stop());

async function promptFor(attributes: Record<string, string>): Promise<string> {
  const rp = await pushIssuance(t.url, {
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    attributes,
    pin: '4821',
    redirectUri: REDIRECT,
  });
  const prompt = await new Browser(REDIRECT).follow(rp.authorizeUrl.href);
  expect(prompt.res?.status).toBe(200);
  return prompt.html!;
}
const chips = (page: string) =>
  [...page.matchAll(/<li class="chip" data-attribute="([^"]+)">([^<]+)<\/li>/g)].map((m) => [m[1], m[2]]);

describe('the issuance prompt lists what the credential will contain', () => {
  it('with the config labels, and only the attributes the hint carried', async () => {
    expect(chips(await promptFor({ FirstName: 'Ada', LastName: 'Lovelace' }))).toEqual([
      ['FirstName', 'Given name'],
      ['LastName', 'Last name'],
    ]);
    expect(chips(await promptFor({ FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' }))).toEqual([
      ['FirstName', 'Given name'],
      ['LastName', 'Last name'],
      ['Email', 'E-mail'],
    ]);
  });
});

/** The prompt of a verification or identity flow the relying party started with PAR. */
async function verificationPrompt(scope: string): Promise<string> {
  return (await openPrompt(t.url, scope, { state: 'st' })).html;
}

/** Each attribute list of the page, with the sentence before it: [sentence, [[name, label], ...]]. */
const attributeLists = (page: string) =>
  [...page.matchAll(/<p class="cred-sub">([^<]+)<\/p>\s*<ul class="attrs[^"]*">(.*?)<\/ul>/gs)].map((m) => [
    m[1],
    [...m[2].matchAll(/<li data-attribute="([^"]+)"[^>]*>.*?<span>([^<]+)<\/span><\/li>/gs)].map((li) => [
      li[1],
      li[2],
    ]),
  ]);

describe('the verification prompt lists what will be asked for (issue 36 §1)', () => {
  it('the required attributes, then apart the optional ones, with the config labels', async () => {
    expect(attributeLists(await verificationPrompt('openid EmployeeBadge'))).toEqual([
      [
        'You will share:',
        [
          ['FirstName', 'Given name'],
          ['LastName', 'Last name'],
        ],
      ],
      ['And, if your credential has them:', [['Email', 'E-mail']]],
    ]);
  });

  it('a type without optional attributes has no second list; each type of several has its own lists', async () => {
    expect(attributeLists(await verificationPrompt('openid MembershipCard EmployeeBadge'))).toEqual([
      [
        'You will share:',
        [
          ['MemberName', 'Member name'],
          ['MemberNumber', 'Member number'],
        ],
      ],
      ['And, if your credential has them:', [['Photo', 'Photo']]],
      [
        'You will share:',
        [
          ['FirstName', 'Given name'],
          ['LastName', 'Last name'],
        ],
      ],
      ['And, if your credential has them:', [['Email', 'E-mail']]],
    ]);
  });

  it('VerifiedIdentity: the required claims, then the subject claim and the optional claims, which the request asks for', async () => {
    const page = await verificationPrompt('openid VerifiedIdentity');
    expect(attributeLists(page)).toEqual([
      [
        'You will share:',
        [
          ['given_name', 'Given name'],
          ['family_name', 'Family name'],
        ],
      ],
      [
        'And, if your credential has them:',
        [
          ['personal_administrative_number', 'Personal administrative number'],
          ['nationalities', 'Nationalities'],
          ['birthdate', 'Birthdate'],
        ],
      ],
    ]);
  });
});
