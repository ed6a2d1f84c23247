import { describe, expect, it } from 'vitest';
import { ConfigError, validateConfig } from '../../../src/config/load.js';
import { minimalDoc } from './fixtures.js';

/**
 * Issue 48: the configuration of the PID as an mdoc (identity.VerifiedIdentity.mdoc, its IACAs listed for
 * VerifiedIdentity) and of types verified only (`verifyOnly`, age from an mDL), checked at start with every
 * problem by its path.
 */
function problems(doc: unknown): string[] {
  try {
    validateConfig(doc);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

const MDL = { doctype: 'org.iso.18013.5.1.mDL', namespace: 'org.iso.18013.5.1' };
const ageType = { name: 'AgeOver18', verifyOnly: true, mdoc: MDL, attributes: { age_over_18: { type: 'boolean' } } };
const pidBlock = { trustedIssuers: [{ issuer: 'https://pid.example', jwksUri: 'https://pid.example/jwks' }] };

function withAge(anchors: unknown = [{ certificates: './iacas.pem', formats: ['mso_mdoc'], types: ['AgeOver18'] }]) {
  const doc = minimalDoc();
  doc.credentialTypes.push(ageType);
  doc.clients[0].scopes.push('AgeOver18');
  doc.verifier = { trustAnchors: anchors };
  return doc;
}

function withPidMdoc(mdoc: Record<string, unknown> = {}, anchors?: unknown) {
  const doc = minimalDoc();
  doc.identity = { VerifiedIdentity: { ...pidBlock, mdoc } };
  doc.clients[0].scopes.push('VerifiedIdentity');
  doc.verifier = {
    trustAnchors: anchors ?? [{ certificates: './pid-iacas.pem', formats: ['mso_mdoc'], types: ['VerifiedIdentity'] }],
  };
  return doc;
}

describe('a type verified only (verifyOnly)', () => {
  it('is accepted with an mdoc an anchor vouches for (listed for it, for every type, or the single-file form)', () => {
    expect(problems(withAge())).toEqual([]);
    expect(problems(withAge([{ certificates: './iacas.pem', formats: ['mso_mdoc'] }]))).toEqual([]);
    expect(problems(withAge('./iacas.pem'))).toEqual([]);
    expect(validateConfig(withAge()).credentialTypes[1].verifyOnly).toBe(true);
    expect(validateConfig(minimalDoc()).credentialTypes[0].verifyOnly).toBeUndefined();
  });

  it('is refused without an mso_mdoc anchor that may vouch for it: nothing could ever verify', () => {
    expect(problems(withAge([{ certificates: './roots.pem', formats: ['dc+sd-jwt'] }]))).toEqual([
      "credentialTypes[1] (name AgeOver18).mdoc: AgeOver18 is verified only: no verifier.trustAnchors entry of format mso_mdoc vouches for it (list its issuers' IACAs there, with types [AgeOver18] or no types)",
    ]);
    const none = withAge();
    delete none.verifier;
    expect(problems(none)).toHaveLength(1);
  });

  it("is refused without an mdoc and without another issuer's vct; accepted with one", () => {
    const doc = minimalDoc();
    doc.credentialTypes.push({ name: 'Partner', verifyOnly: true, attributes: { n: { type: 'string' } } });
    expect(problems(doc)).toEqual([
      'credentialTypes[1] (name Partner).verifyOnly: Partner is verified only, so it needs an mdoc (doctype and namespace) or the vct of the issuer whose SD-JWT VCs it takes; it has neither',
    ]);
    doc.credentialTypes[1].vct = 'https://vc.example.com/types/Partner';
    expect(problems(doc)[0]).toMatch(/its vct is this service's own/);
    doc.credentialTypes[1].vct = 'https://partner.example/pass';
    expect(problems(doc)).toEqual([]);
  });

  it('cannot be issued: a client listing issue.<type> is refused, naming the scope', () => {
    const doc = withAge();
    doc.clients[0].scopes.push('issue.AgeOver18');
    expect(problems(doc)).toEqual([
      `clients[0] (clientId hr-portal).scopes[${doc.clients[0].scopes.length - 1}]: AgeOver18 is verified only (verifyOnly): this service does not issue it; list the scope AgeOver18 to verify it`,
    ]);
  });

  it('age_over_NN of an mdoc is a boolean (ISO/IEC 18013-5 §7.2.5)', () => {
    const doc = withAge();
    doc.credentialTypes[1].attributes.age_over_21 = { type: 'string' };
    expect(problems(doc)).toEqual([
      'credentialTypes[1] (name AgeOver18).attributes.age_over_21.type: must be boolean: age_over_21 is a boolean element of an mdoc (ISO/IEC 18013-5 §7.2.5)',
    ]);
  });
});

describe('the PID as an mdoc (identity.VerifiedIdentity.mdoc)', () => {
  it('defaults to the rulebook doctype and namespace, with its IACAs listed for VerifiedIdentity', () => {
    const config = validateConfig(withPidMdoc());
    expect(config.identity.VerifiedIdentity!.mdoc).toEqual({
      doctype: 'eu.europa.ec.eudi.pid.1',
      namespace: 'eu.europa.ec.eudi.pid.1',
      elements: {},
    });
  });

  it('is refused when no anchor names VerifiedIdentity: an anchor of every type never vouches for a PID (D12)', () => {
    const expected = [
      "identity.VerifiedIdentity.mdoc: no verifier.trustAnchors entry names VerifiedIdentity in its types: list the PID providers' IACAs as { certificates: <file>, formats: [mso_mdoc], types: [VerifiedIdentity] }",
    ];
    expect(problems(withPidMdoc({}, [{ certificates: './all.pem', formats: ['mso_mdoc'] }]))).toEqual(expected);
    expect(problems(withPidMdoc({}, './all.pem'))).toEqual(expected);
  });

  it("refuses VerifiedIdentity among an anchor's types without the mdoc block, or for SD-JWT VCs only", () => {
    const doc = minimalDoc();
    doc.identity = { VerifiedIdentity: pidBlock };
    doc.verifier = {
      trustAnchors: [{ certificates: './pid.pem', formats: ['mso_mdoc'], types: ['VerifiedIdentity'] }],
    };
    expect(problems(doc)).toEqual([
      'verifier.trustAnchors[0].types[0]: VerifiedIdentity takes IACAs only when identity.VerifiedIdentity.mdoc asks for the PID as an mdoc',
    ]);
    const sdJwtOnly = withPidMdoc({}, [
      { certificates: './pid.pem', formats: ['mso_mdoc'], types: ['VerifiedIdentity'] },
      { certificates: './pid.pem', formats: ['dc+sd-jwt'], types: ['VerifiedIdentity'] },
    ]);
    expect(problems(sdJwtOnly)).toEqual([
      "verifier.trustAnchors[1].types[0]: VerifiedIdentity takes IACAs of the PID's mdoc form only: this entry needs formats [mso_mdoc]",
    ]);
  });

  it('refuses a required claim the mdoc has no element for, unless elements names one', () => {
    const doc = withPidMdoc();
    doc.identity.VerifiedIdentity.claims = ['given_name', 'address'];
    expect(problems(doc)).toEqual([
      "identity.VerifiedIdentity.claims[1]: address has no element in the PID's mdoc form (PID Rulebook); name one in mdoc.elements, or make it an optional claim",
    ]);
    doc.identity.VerifiedIdentity.mdoc.elements = { address: 'resident_address' };
    expect(problems(doc)).toEqual([]);
  });

  it('refuses two claims read from one element: the mdoc query names each element once (OpenID4VP 1.0 §6.3)', () => {
    const doc = withPidMdoc({ elements: { nationalities: 'birth_date' } });
    doc.identity.VerifiedIdentity.optionalClaims = ['nationalities'];
    expect(problems(doc)).toEqual([
      'identity.VerifiedIdentity.mdoc.elements: birthdate and nationalities are both read from the mdoc element birth_date; each claim needs an element of its own',
    ]);
  });
});
