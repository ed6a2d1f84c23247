import { describe, expect, it } from 'vitest';
import type { CredentialType } from '../../../src/config/schema.js';
import {
  claimOptions,
  claimSetsFor,
  credentialQueryFor,
  MAX_CLAIM_SETS,
  dcqlQueryFor,
  missingClaims,
  satisfiedOption,
  type DcqlClaimsQuery,
} from '../../../src/verification/dcql.js';

const BASE = 'https://vc.example.com';

const type = (name: string, attributes: Record<string, boolean>, vct?: string): CredentialType => ({
  name,
  validity: 'P365D',
  ...(vct ? { vct } : {}),
  attributes: Object.fromEntries(
    Object.entries(attributes).map(([attr, required]) => [attr, { type: 'string', required }]),
  ),
});

const badge = type('EmployeeBadge', { FirstName: true, LastName: true, Email: false });

describe('building the DCQL query from the requested types', () => {
  it('asks for one dc+sd-jwt credential per type, by its vct, with one claim per attribute', () => {
    expect(credentialQueryFor(badge, BASE)).toEqual({
      id: 'EmployeeBadge',
      format: 'dc+sd-jwt',
      meta: { vct_values: ['https://vc.example.com/types/EmployeeBadge'] },
      claims: [
        { id: 'FirstName', path: ['FirstName'] },
        { id: 'LastName', path: ['LastName'] },
        { id: 'Email', path: ['Email'] },
      ],
      claim_sets: [
        ['FirstName', 'LastName', 'Email'],
        ['FirstName', 'LastName'],
      ],
    });
  });

  it('uses the configured vct when the type has one', () => {
    expect(credentialQueryFor(type('Pid', { given_name: true }, 'https://pid.example/vct/pid'), BASE).meta).toEqual({
      vct_values: ['https://pid.example/vct/pid'],
    });
  });

  it('leaves claim_sets out when every attribute is required (all claims are then requested)', () => {
    const query = credentialQueryFor(type('Membership', { MemberId: true, Level: true }), BASE);
    expect(query).not.toHaveProperty('claim_sets');
    expect(claimOptions(query)).toEqual([['MemberId', 'Level']]);
  });

  it('falls back to any single attribute when none is required, never to an empty set', () => {
    const query = credentialQueryFor(type('Newsletter', { Email: false, Topic: false }), BASE);
    expect(query.claim_sets).toEqual([['Email', 'Topic'], ['Email'], ['Topic']]);
  });

  it('keeps the order the types were asked for, with ids DCQL allows', () => {
    const query = dcqlQueryFor([type('Membership', { MemberId: true }), badge], BASE);
    expect(query.credentials.map((c) => c.id)).toEqual(['Membership', 'EmployeeBadge']);
    expect(query).not.toHaveProperty('credential_sets');
    for (const c of query.credentials) {
      expect(c.id).toMatch(/^[A-Za-z0-9_-]+$/);
      for (const claim of c.claims ?? []) expect(claim.id).toMatch(/^[A-Za-z0-9_-]+$/);
    }
  });
});

describe('claim sets for optional claims (issue 36 §1)', () => {
  /** What a wallet discloses (§6.4.1: the first claim set it can satisfy) from a credential holding `has`. */
  const disclosed = (sets: string[][], has: string[]) => sets.find((set) => set.every((name) => has.includes(name)));

  it('offers every combination of two optional claims, most claims first, the preferred claim first among equals', () => {
    expect(claimSetsFor(['Name', 'Number'], ['Premium', 'Photo'])).toEqual([
      ['Name', 'Number', 'Premium', 'Photo'],
      ['Name', 'Number', 'Premium'],
      ['Name', 'Number', 'Photo'],
      ['Name', 'Number'],
    ]);
  });

  it('asks for no claim sets when nothing is optional (all claims are then requested)', () => {
    expect(claimSetsFor(['Name'], [])).toBeUndefined();
  });

  it('a credential missing any combination of up to four optional claims discloses every optional claim it has', () => {
    const optional = ['A', 'B', 'C', 'D'];
    const sets = claimSetsFor(['R'], optional)!;
    expect(sets).toHaveLength(MAX_CLAIM_SETS);
    for (let mask = 0; mask < 1 << optional.length; mask++) {
      const has = ['R', ...optional.filter((_, i) => mask & (1 << i))];
      expect(new Set(disclosed(sets, has))).toEqual(new Set(has));
    }
  });

  it('with no required claim, never offers the empty set: a credential with none of the claims matches nothing', () => {
    const sets = claimSetsFor([], ['A', 'B', 'C'])!;
    expect(sets).toHaveLength(7);
    expect(sets.every((set) => set.length > 0)).toBe(true);
    expect(disclosed(sets, [])).toBeUndefined();
    expect(disclosed(sets, ['C'])).toEqual(['C']);
  });

  it('beyond four optional claims: exact for the sizes that fit in 16 sets, then the preferred claims, one fewer each time', () => {
    const optional = ['A', 'B', 'C', 'D', 'E', 'F'];
    const sets = claimSetsFor(['R'], optional)!;
    expect(sets.length).toBeLessThanOrEqual(MAX_CLAIM_SETS);
    expect(sets.at(-1)).toEqual(['R']);
    // one missing optional claim: still every other one
    for (const missing of optional)
      expect(disclosed(sets, ['R', ...optional.filter((o) => o !== missing)])).toHaveLength(optional.length);
    // more missing: the claims before the first missing one
    expect(disclosed(sets, ['R', 'A', 'B', 'D', 'F'])).toEqual(['R', 'A', 'B']);
    expect(disclosed(sets, ['R', 'B', 'C', 'D'])).toEqual(['R']);
  });

  it('the query of a type with two optional attributes lists all four combinations', () => {
    const query = credentialQueryFor(type('MembershipCard', { MemberName: true, Premium: false, Photo: false }), BASE);
    expect(query.claim_sets).toEqual([
      ['MemberName', 'Premium', 'Photo'],
      ['MemberName', 'Premium'],
      ['MemberName', 'Photo'],
      ['MemberName'],
    ]);
  });
});

describe('matching disclosed claims to a credential query', () => {
  const query = credentialQueryFor(badge, BASE);
  const having =
    (...names: string[]) =>
    (claim: DcqlClaimsQuery) =>
      names.includes(String(claim.path[0]));

  it('prefers the full claim set and falls back to the required one', () => {
    expect(satisfiedOption(query, having('FirstName', 'LastName', 'Email'))).toEqual([
      'FirstName',
      'LastName',
      'Email',
    ]);
    expect(satisfiedOption(query, having('FirstName', 'LastName'))).toEqual(['FirstName', 'LastName']);
  });

  it('is not satisfied when a required claim is missing, and names it', () => {
    expect(satisfiedOption(query, having('FirstName', 'Email'))).toBeUndefined();
    expect(missingClaims(query, having('FirstName', 'Email'))).toEqual(['LastName']);
  });
});

describe('HAIP 1.0 §5, OpenID4VP 1.0 §6.1.1.1: an SD-JWT VC query names its trust anchors by key identifier', () => {
  it('with key identifiers: trusted_authorities of type aki; without: none', () => {
    expect(credentialQueryFor(badge, BASE, ['s9tIpPmhxdiuNkHMEWNpYim8S8Y']).trusted_authorities).toEqual([
      { type: 'aki', values: ['s9tIpPmhxdiuNkHMEWNpYim8S8Y'] },
    ]);
    expect(credentialQueryFor(badge, BASE, [])).not.toHaveProperty('trusted_authorities');
    expect(credentialQueryFor(badge, BASE)).not.toHaveProperty('trusted_authorities');
  });

  it('dcqlQueryFor asks per type', () => {
    const query = dcqlQueryFor([badge, type('Other', { A: true })], BASE, [], (name) =>
      name === 'EmployeeBadge' ? ['a1'] : [],
    );
    expect(query.credentials[0].trusted_authorities).toEqual([{ type: 'aki', values: ['a1'] }]);
    expect(query.credentials[1]).not.toHaveProperty('trusted_authorities');
  });
});
