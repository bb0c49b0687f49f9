import { describe, expect, test } from 'vitest';
import { redirectUriProblem } from './clientRegistration.js';

describe('redirect URIs a client may register', () => {
  test.each(['https://claude.ai/api/mcp/auth_callback', 'http://127.0.0.1:3999/cb', 'http://localhost/callback?x=1', 'http://[::1]:33418/'])('%s is accepted', (uri) => {
    expect(redirectUriProblem(uri)).toBeUndefined();
  });

  test.each([
    ['http://evil.example/cb', /plain http/],
    ['http://localhost:3999/cb#frag', /fragment/],
    ['file:///etc/passwd', /scheme file:/],
    ['javascript:alert(1)', /scheme javascript:/],
    ['cursor://anysphere.cursor-mcp/oauth/callback', /scheme cursor:/],
    ['https://user:pass@example.com/cb', /user name or password/],
    ['/relative/cb', /absolute URL/],
    [`https://example.com/${'a'.repeat(1000)}`, /longer than 1000/],
    // Hosts the URL parser lets through that would break out of the sign-in page's CSP header.
    ["https://app.example;script-src'unsafe-inline'/cb", /not a DNS name or an IP address/],
    ['https://a*b.example/cb', /not a DNS name or an IP address/],
    ['https://a,b.example/cb', /not a DNS name or an IP address/],
  ])('%s is refused: %s', (uri, reason) => {
    expect(redirectUriProblem(uri)).toMatch(reason);
  });
});
