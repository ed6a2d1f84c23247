import { describe, expect, it } from 'vitest';
import { identitySchema, type CredentialType, type PidFlowConfig } from '../../../src/config/schema.js';
import { pidRequestKind } from '../../../src/identity/pid.js';
import { pidMdocElement } from '../../../src/rules/pidMdoc.js';
import { parseScope } from '../../../src/rules/scopes.js';
import { dcqlQueryFor } from '../../../src/verification/dcql.js';

/** Issue 48: the PID's mdoc element names (ARF Annex 3.01 PID Rulebook, chapters 3 and 4) and types verified only. */
const pidBlock = (extra: Record<string, unknown> = {}): PidFlowConfig =>
  identitySchema.parse({ VerifiedIdentity: { trustedIssuers: [{ issuer: 'https://pid.example' }], ...extra } })
    .VerifiedIdentity!;

describe('the PID rulebook: SD-JWT VC claim -> mdoc element', () => {
  it.each([
    ['birthdate', 'birth_date'],
    ['nationalities', 'nationality'],
    ['birth_family_name', 'family_name_birth'],
    ['birth_given_name', 'given_name_birth'],
    ['email', 'email_address'],
    ['phone_number', 'mobile_phone_number'],
    ['date_of_expiry', 'expiry_date'],
    ['date_of_issuance', 'issuance_date'],
    ['given_name', 'given_name'],
    ['family_name', 'family_name'],
    ['place_of_birth', 'place_of_birth'],
    ['personal_administrative_number', 'personal_administrative_number'],
    ['age_in_years', 'age_in_years'],
  ])('%s is read from %s', (claim, element) => expect(pidMdocElement(claim)).toBe(element));

  it.each(['address', 'age_equal_or_over', 'picture'])('%s has no element of the same shape', (claim) =>
    expect(pidMdocElement(claim)).toBeUndefined(),
  );

  it("the operator's elements win, over renamed and absent ones", () => {
    expect(pidMdocElement('address', { address: 'resident_address' })).toBe('resident_address');
    expect(pidMdocElement('birthdate', { birthdate: 'date_of_birth' })).toBe('date_of_birth');
    expect(pidMdocElement('toString')).toBe('toString'); // own properties only
  });
});

describe('pidRequestKind with mdoc (OpenID4VP 1.0 §6.2, §B.2.3)', () => {
  it('without mdoc: the SD-JWT VC PID alone, as before', () => {
    const kind = pidRequestKind(pidBlock());
    expect(kind.query.credentials.map((c) => c.id)).toEqual(['pid']);
    expect(kind.query.credential_sets).toBeUndefined();
  });

  it('with mdoc: either form, the mdoc asking the elements the claims come from, an optional claim without element left out', () => {
    const kind = pidRequestKind(
      pidBlock({
        optionalClaims: ['nationalities', 'address'],
        subjectClaim: 'personal_administrative_number',
        mdoc: {},
      }),
      ['aki-1'],
    );
    const [, mdoc] = kind.query.credentials;
    expect(kind.query.credential_sets).toEqual([{ options: [['pid'], ['pid-mdoc']], required: true }]);
    expect(mdoc.meta).toEqual({ doctype_value: 'eu.europa.ec.eudi.pid.1' });
    expect(mdoc.trusted_authorities).toEqual([{ type: 'aki', values: ['aki-1'] }]);
    expect(mdoc.claims!.map((c) => c.path[1])).toEqual([
      'given_name',
      'family_name',
      'birth_date',
      'personal_administrative_number',
      'nationality',
    ]);
    // every claim set holds the required elements
    for (const set of mdoc.claim_sets!) expect(set.slice(0, 3)).toEqual(['given_name', 'family_name', 'birth_date']);
    expect(kind.claimNames.get('pid-mdoc')).toEqual(['given_name', 'family_name', 'birthdate', 'nationalities']);
    expect(kind.claimElements!.get('pid-mdoc')!.get('birthdate')).toBe('birth_date');
    expect(kind.mdocNamespaces!.get('pid-mdoc')).toBe('eu.europa.ec.eudi.pid.1');
    expect(kind.typeNames!.get('pid-mdoc')).toBe('pid');
  });
});

describe('a type verified only (verifyOnly)', () => {
  const age = {
    name: 'AgeOver18',
    validity: 'P365D',
    verifyOnly: true,
    mdoc: { doctype: 'org.iso.18013.5.1.mDL', namespace: 'org.iso.18013.5.1' },
    attributes: { age_over_18: { type: 'boolean', required: true } },
  } as CredentialType;

  it("is asked for as an mdoc only; one of another issuer's vct as an SD-JWT VC too", () => {
    expect(dcqlQueryFor([age], 'https://vc.example.com').credentials.map((c) => c.id)).toEqual(['AgeOver18-mdoc']);
    const partner = { ...age, vct: 'https://partner.example/age' };
    const query = dcqlQueryFor([partner], 'https://vc.example.com');
    expect(query.credentials.map((c) => c.id)).toEqual(['AgeOver18', 'AgeOver18-mdoc']);
    expect(query.credential_sets).toEqual([{ options: [['AgeOver18'], ['AgeOver18-mdoc']], required: true }]);
  });

  it('issue.<type> is invalid_scope even for a client that lists it (spec Errors, Scope)', () => {
    const opts = {
      issuanceOpenid: 'required' as const,
      externalFlows: true,
      clientScopes: ['issue.AgeOver18', 'AgeOver18'],
      credentialTypes: ['AgeOver18'],
      verifyOnlyTypes: ['AgeOver18'],
    };
    let thrown: unknown;
    try {
      parseScope('openid issue.AgeOver18', opts);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({
      error: 'invalid_scope',
      message: 'scope "issue.AgeOver18" names a type that is verified only; this service does not issue it',
    });
    // verifying it is what it is for
    expect(parseScope('openid AgeOver18', opts)).toMatchObject({
      kind: 'verification',
      credentialTypes: ['AgeOver18'],
    });
  });
});
