import { describe, it, expect } from 'vitest';
import { parseScope } from '../../../src/rules/scopes.js';
import { expectProtocolError } from './helpers.js';

const credentialTypes = ['EmployeeBadge', 'Diploma', 'Unused'];
const clientScopes = ['issue.EmployeeBadge', 'issue.Diploma', 'EmployeeBadge', 'Diploma'];
const parse = (scope: unknown, version: 1 | 2 = 2) =>
  parseScope(scope, {
    issuanceOpenid: version === 2 ? 'required' : 'forbidden',
    externalFlows: version === 2,
    clientScopes,
    credentialTypes,
  });

describe('spec: Errors, Scope "Not provided" -> invalid_scope', () => {
  it.each([undefined, null, '', '   ', 42, ['openid']])(
    'refuses a missing, empty or non-string scope (%j) (spec: Errors, Scope)',
    (scope) => {
      expectProtocolError(() => parse(scope), 'invalid_scope', 'scope is required');
    },
  );
});

describe('spec: Errors, Scope "not registered" -> invalid_scope', () => {
  it('refuses a scope that names a configured type but is not registered for the client (spec: Errors, Scope)', () => {
    const e = expectProtocolError(
      () =>
        parseScope('openid issue.Unused', {
          issuanceOpenid: 'required',
          externalFlows: true,
          clientScopes,
          credentialTypes,
        }),
      'invalid_scope',
      'scope "issue.Unused"',
      'not registered for this client',
    );
    expect(e.description).not.toContain('EmployeeBadge');
  });

  it('refuses a registered scope that names no configured credential type (spec: Scope format)', () => {
    expectProtocolError(
      () =>
        parseScope('openid issue.Ghost', {
          issuanceOpenid: 'required',
          externalFlows: true,
          clientScopes: ['issue.Ghost'],
          credentialTypes,
        }),
      'invalid_scope',
      'scope "issue.Ghost"',
      'configured credential type',
    );
  });

  it('refuses an unknown verification scope, naming it (spec: Errors, Scope)', () => {
    expectProtocolError(() => parse('openid Ghost'), 'invalid_scope', 'scope "Ghost"');
  });

  it('truncates a very long scope value in the description (D4)', () => {
    const e = expectProtocolError(() => parse(`openid ${'x'.repeat(5000)}`), 'invalid_scope', 'scope "xxxx');
    expect(e.description.length).toBeLessThan(200);
  });
});

describe('spec: Scope format, Issuance (Version 2)', () => {
  it('accepts openid plus exactly one issue.<CredentialType> (spec: Scope format, Issuance)', () => {
    expect(parse('openid issue.EmployeeBadge')).toEqual({
      kind: 'issuance',
      credentialType: 'EmployeeBadge',
      scopes: ['openid', 'issue.EmployeeBadge'],
      external: false,
    });
  });

  it('collapses repeated whitespace and keeps order (spec: Scope format, space-separated list)', () => {
    expect(parse('  issue.EmployeeBadge \t  openid  ').scopes).toEqual(['issue.EmployeeBadge', 'openid']);
  });

  it('refuses Version 2 issuance without openid (spec: Scope format, Issuance "must also contain openid")', () => {
    expectProtocolError(() => parse('issue.EmployeeBadge'), 'invalid_scope', 'scope', 'openid');
  });

  it('refuses two issue.<CredentialType> scopes (spec: Scope format, Issuance "Exactly one")', () => {
    expectProtocolError(
      () => parse('openid issue.EmployeeBadge issue.Diploma'),
      'invalid_scope',
      'scope',
      'exactly one issue.',
    );
  });

  it('collapses a duplicated issue.<CredentialType> instead of counting it twice (spec: Scope format)', () => {
    expect(parse('openid issue.Diploma issue.Diploma')).toMatchObject({ kind: 'issuance', credentialType: 'Diploma' });
  });

  it('refuses mixing issue.* with verification scopes (spec: Scope format)', () => {
    expectProtocolError(() => parse('openid issue.EmployeeBadge Diploma'), 'invalid_scope', 'scope', 'mix');
  });
});

describe('spec: Scope format, Version 1 differences', () => {
  it('accepts a Version 1 issuance scope without openid (spec: Scope format, Version 1 differences)', () => {
    expect(parse('issue.EmployeeBadge', 1)).toEqual({
      kind: 'issuance',
      credentialType: 'EmployeeBadge',
      scopes: ['issue.EmployeeBadge'],
      external: false,
    });
  });

  it('refuses openid in a Version 1 issuance scope (spec: Scope format, Version 1 differences)', () => {
    expectProtocolError(() => parse('openid issue.EmployeeBadge', 1), 'invalid_scope', 'scope must not contain openid');
  });

  it('still requires openid for Version 1 verification (spec: Version 1 non-PAR authorise, scope)', () => {
    expectProtocolError(() => parse('EmployeeBadge', 1), 'invalid_scope', 'scope', 'openid');
    expect(parse('openid EmployeeBadge', 1)).toMatchObject({
      kind: 'verification',
      credentialTypes: ['EmployeeBadge'],
    });
  });
});

describe('spec: Scope format, Verification', () => {
  it('accepts openid plus one or more credential types (spec: Scope format, Verification)', () => {
    expect(parse('openid EmployeeBadge Diploma')).toEqual({
      kind: 'verification',
      credentialTypes: ['EmployeeBadge', 'Diploma'],
      scopes: ['openid', 'EmployeeBadge', 'Diploma'],
      external: false,
    });
  });

  it('collapses duplicate credential types (spec: Scope format, Verification)', () => {
    expect(parse('openid Diploma openid Diploma')).toEqual({
      kind: 'verification',
      credentialTypes: ['Diploma'],
      scopes: ['openid', 'Diploma'],
      external: false,
    });
  });

  it('refuses verification without openid (spec: Scope format, Verification "must contain openid")', () => {
    expectProtocolError(() => parse('EmployeeBadge'), 'invalid_scope', 'scope', 'openid');
  });

  it('refuses a scope of only openid (spec: Scope format, "One or more <CredentialType>")', () => {
    expectProtocolError(() => parse('openid'), 'invalid_scope', 'scope', 'credential type');
  });
});

describe('spec: Scope format, External Client flows (scope External, Version 2; D13)', () => {
  const withExternal = [...clientScopes, 'External'];
  const parseExt = (scope: string, version: 1 | 2 = 2, scopes = withExternal) =>
    parseScope(scope, {
      issuanceOpenid: version === 2 ? 'required' : 'forbidden',
      externalFlows: version === 2,
      clientScopes: scopes,
      credentialTypes,
    });

  it('marks issuance and verification requests that carry External', () => {
    expect(parseExt('openid issue.Diploma External')).toMatchObject({
      kind: 'issuance',
      credentialType: 'Diploma',
      external: true,
    });
    expect(parseExt('openid Diploma External')).toMatchObject({
      kind: 'verification',
      credentialTypes: ['Diploma'],
      external: true,
    });
    expect(parseExt('openid Diploma')).toMatchObject({ external: false });
  });

  it('refuses External in Version 1 (spec: Version 1 differences, "the External scope is not described")', () => {
    expectProtocolError(() => parseExt('issue.Diploma External', 1), 'invalid_scope', 'External', 'Version 1');
  });

  it('refuses External for a client that does not list it (spec: Errors, Scope "not registered")', () => {
    expectProtocolError(
      () => parseExt('openid Diploma External', 2, clientScopes),
      'invalid_scope',
      'External',
      'not registered',
    );
  });

  it('refuses External alone: it marks a flow, it does not name one (spec: Scope format)', () => {
    expectProtocolError(() => parseExt('openid External'), 'invalid_scope', 'credential type');
  });
});
