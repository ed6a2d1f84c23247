import { describe, expect, it } from 'vitest';
import type { CredentialType } from '../../../src/config/schema.js';
import { claimOptions, credentialQueryFor, dcqlQueryFor, missingClaims, satisfiedOption, type DcqlClaimsQuery } from '../../../src/verification/dcql.js';

const BASE = 'https://vc.example.com';

const type = (name: string, attributes: Record<string, boolean>, vct?: string): CredentialType => ({
  name,
  validity: 'P365D',
  ...(vct ? { vct } : {}),
  attributes: Object.fromEntries(Object.entries(attributes).map(([attr, required]) => [attr, { type: 'string', required }])),
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
    expect(credentialQueryFor(type('Pid', { given_name: true }, 'https://pid.example/vct/pid'), BASE).meta).toEqual({ vct_values: ['https://pid.example/vct/pid'] });
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

describe('matching disclosed claims to a credential query', () => {
  const query = credentialQueryFor(badge, BASE);
  const having = (...names: string[]) => (claim: DcqlClaimsQuery) => names.includes(String(claim.path[0]));

  it('prefers the full claim set and falls back to the required one', () => {
    expect(satisfiedOption(query, having('FirstName', 'LastName', 'Email'))).toEqual(['FirstName', 'LastName', 'Email']);
    expect(satisfiedOption(query, having('FirstName', 'LastName'))).toEqual(['FirstName', 'LastName']);
  });

  it('is not satisfied when a required claim is missing, and names it', () => {
    expect(satisfiedOption(query, having('FirstName', 'Email'))).toBeUndefined();
    expect(missingClaims(query, having('FirstName', 'Email'))).toEqual(['LastName']);
  });
});
