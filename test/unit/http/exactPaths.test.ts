import { describe, expect, it } from 'vitest';
import { foldedForms, spellingOf } from '../../../src/http/exactPaths.js';

/**
 * docs/decisions.md, "Exact paths in front of the providers": a path the service lists is served as written
 * only; what a router could take for it (another case, a trailing slash, repeated slashes, percent-encoding)
 * is another spelling, and paths the list does not name are none of its business.
 */
const spelling = spellingOf(['/wallet/token', '/wallet/auth/:uid', '/oidc/authorize', '/oidc/authorize/:uid']);

describe('spellingOf', () => {
  it.each([
    ['/wallet/token', 'exact'],
    ['/wallet/auth/AbC-123', 'exact'],
    ['/oidc/authorize', 'exact'],
    ['/oidc/authorize/uid', 'exact'],
    ['/wallet/auth/a%2Fb', 'exact'],
    ['/wallet/Token', 'other'],
    ['/wallet/TOKEN', 'other'],
    ['/WALLET/token', 'other'],
    ['/wallet/token/', 'other'],
    ['/wallet/token//', 'other'],
    ['/wallet//token', 'other'],
    ['/wallet/%74oken', 'other'],
    ['/wallet/%54OKEN/', 'other'],
    ['/wallet/AUTH/uid', 'other'],
    ['/wallet/auth/uid/', 'other'],
    ['/wallet/AUTH/a%2Fb', 'other'],
    ['/oidc/authorize/', 'other'],
    ['/OIDC/Authorize/uid', 'other'],
    ['/wallet/auth', 'unlisted'],
    ['/wallet/auth/', 'unlisted'],
    ['/wallet/tokens', 'unlisted'],
    ['/wallet/token/x', 'unlisted'],
    ['/interaction/v2/ABC', 'unlisted'],
    ['/', 'unlisted'],
    ['/wallet/%zz', 'unlisted'],
  ] as const)('%s: %s', (path, expected) => {
    expect(spelling(path)).toBe(expected);
  });
});

describe('foldedForms', () => {
  it('covers what oidc-provider 9 folds (ASCII case, one trailing slash), and more', () => {
    expect(foldedForms('/wallet/Token/')).toEqual(['/WALLET/TOKEN']);
    expect(foldedForms('/wallet/%74oken')).toEqual(['/WALLET/%74OKEN', '/WALLET/TOKEN']);
    expect(foldedForms('/')).toEqual(['/']);
    expect(foldedForms('/%E0%A4%A')).toEqual(['/%E0%A4%A']);
  });
});
