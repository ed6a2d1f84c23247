import { describe, it, expect } from 'vitest';
import { parseScope } from '../../../src/rules/scopes.js';
import { expectProtocolError } from './helpers.js';

const credentialTypes = ['EmployeeBadge'];
const clientScopes = ['issue.EmployeeBadge', 'EmployeeBadge', 'VerifiedIdentity', 'VerifiedIdentity_Other', 'External'];
const parse = (scope: string, version: 1 | 2 = 2, scopes = clientScopes) =>
  parseScope(scope, {
    issuanceOpenid: version === 2 ? 'required' : 'forbidden',
    externalFlows: version === 2,
    clientScopes: scopes,
    credentialTypes,
  });

describe('spec Scope format: "First identity-verification flow: VerifiedIdentity; must contain openid"', () => {
  it.each([1, 2] as const)('Version %i: openid VerifiedIdentity is the first identity flow', (version) => {
    expect(parse('openid VerifiedIdentity', version)).toEqual({
      kind: 'identity',
      flow: 'VerifiedIdentity',
      scopes: ['openid', 'VerifiedIdentity'],
      external: false,
    });
  });

  it('without openid: invalid_scope', () => {
    expectProtocolError(() => parse('VerifiedIdentity'), 'invalid_scope', 'must contain openid for VerifiedIdentity');
  });

  it('with External (Version 2): an External Client flow of the first identity flow', () => {
    expect(parse('openid VerifiedIdentity External')).toMatchObject({
      kind: 'identity',
      flow: 'VerifiedIdentity',
      external: true,
    });
  });
});

describe('spec Scope format: "Second identity-verification flow: VerifiedIdentity_Other; must contain openid"', () => {
  it.each([1, 2] as const)('Version %i: openid VerifiedIdentity_Other is the second identity flow', (version) => {
    expect(parse('openid VerifiedIdentity_Other', version)).toEqual({
      kind: 'identity',
      flow: 'VerifiedIdentity_Other',
      scopes: ['openid', 'VerifiedIdentity_Other'],
      external: false,
    });
  });

  it('without openid: invalid_scope', () => {
    expectProtocolError(
      () => parse('VerifiedIdentity_Other'),
      'invalid_scope',
      'must contain openid for VerifiedIdentity_Other',
    );
  });

  it('with External: invalid_scope (D12: its journey ends in a browser)', () => {
    expectProtocolError(
      () => parse('openid VerifiedIdentity_Other External'),
      'invalid_scope',
      'External does not combine with VerifiedIdentity_Other',
    );
  });
});

describe('identity scopes are flows of their own', () => {
  it('both at once: invalid_scope', () => {
    expectProtocolError(() => parse('openid VerifiedIdentity VerifiedIdentity_Other'), 'invalid_scope', 'not both');
  });

  it.each(['openid VerifiedIdentity EmployeeBadge', 'openid VerifiedIdentity_Other issue.EmployeeBadge'])(
    'mixed with credential types (%s): invalid_scope',
    (scope) => {
      expectProtocolError(() => parse(scope), 'invalid_scope', 'must not mix');
    },
  );

  it('not registered for the client: invalid_scope (spec: Errors, Scope "not registered")', () => {
    expectProtocolError(
      () => parse('openid VerifiedIdentity', 2, ['EmployeeBadge']),
      'invalid_scope',
      'scope "VerifiedIdentity" is not registered for this client',
    );
  });
});
