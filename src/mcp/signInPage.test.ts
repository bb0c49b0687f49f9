import { describe, expect, test } from 'vitest';
import { signInPagePolicy } from './signInPage.js';

describe('the sign-in page policy', () => {
  test.each([
    ['https://claude.ai/api/mcp/auth_callback', 'https://claude.ai'],
    ['http://127.0.0.1:6274/oauth/callback?x=1', 'http://127.0.0.1:6274'],
    ['http://localhost:3999/cb', 'http://localhost:3999'],
    // No IPv6 literal in a CSP source: its scheme stands in.
    ['http://[::1]:33418/', 'http:'],
    ['https://[2001:db8::1]/cb', 'https:'],
    ['https://Bücher.example:8443/cb', 'https://xn--bcher-kva.example:8443'],
  ])('the form may go to this origin and to that of %s (the redirect answering it)', (redirectUri, origin) => {
    expect(signInPagePolicy(redirectUri)).toBe(`default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; form-action 'self' ${origin}`);
  });

  test.each(["https://app.example;script-src'unsafe-inline'/cb", 'https://a*b.example/cb', 'cursor://anysphere.cursor-mcp/cb', 'not a url'])('%s adds nothing to the header', (redirectUri) => {
    expect(signInPagePolicy(redirectUri)).toBe("default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; form-action 'self'");
  });
});
