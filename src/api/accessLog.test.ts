import { describe, expect, test } from 'vitest';
import { accessLogLevel, loggableUrl } from './accessLog.js';

describe('loggableUrl: credentials in the query string never reach the access log', () => {
  test.each([
    ['/v1/orders?api_key=svc_test_secret', '/v1/orders?api_key=[redacted]'],
    ['/v1/orders?key=svc_test_secret&limit=5', '/v1/orders?key=[redacted]&limit=5'],
    ['/v1/orders?limit=5&token=abc', '/v1/orders?limit=5&token=[redacted]'],
    ['/v1/me?access_token=abc#frag', '/v1/me?access_token=[redacted]#frag'],
    ['/v1/me?ACCESS_TOKEN=abc', '/v1/me?ACCESS_TOKEN=[redacted]'],
    ['/v1/me?Api_Key=abc', '/v1/me?Api_Key=[redacted]'],
    // Encoded names are what the application would decode, so they are redacted too.
    ['/v1/me?api%5Fkey=abc', '/v1/me?api%5Fkey=[redacted]'],
    ['/v1/me?to%6Ben=abc&x=1', '/v1/me?to%6Ben=[redacted]&x=1'],
    ['/v1/me?key', '/v1/me?key=[redacted]'],
    ['/v1/me?key=a&key=b', '/v1/me?key=[redacted]&key=[redacted]'],
    ['/downloads/exports/x.csv?expires=1&signature=deadbeef', '/downloads/exports/x.csv?expires=1&signature=[redacted]'],
    // Any name containing code, secret, token, password, verifier, authorization or key, encoded or not.
    ['/v1/me?Authorization=Bearer%20svc_test_x', '/v1/me?Authorization=[redacted]'],
    ['/mcp?refresh_token=dsa_rt_x', '/mcp?refresh_token=[redacted]'],
    ['/v1/orders?limit=5&client_secret=s&code_verifier=v&signInCode=K2H4', '/v1/orders?limit=5&client_secret=[redacted]&code_verifier=[redacted]&signInCode=[redacted]'],
    ['/v1/me?PASSWORD=x&%41uthorization=y', '/v1/me?PASSWORD=[redacted]&%41uthorization=[redacted]'],
    ['/v1/orders?keyboard=1&tokens=3', '/v1/orders?keyboard=[redacted]&tokens=[redacted]'],
    // Every value of the OAuth endpoints.
    ['/authorize?client_id=c&state=s&signInCode=K2H4-ABCD', '/authorize?client_id=[redacted]&state=[redacted]&signInCode=[redacted]'],
    ['/token?code=dsa_ac_x&client_secret=s&code_verifier=v', '/token?code=[redacted]&client_secret=[redacted]&code_verifier=[redacted]'],
    ['/revoke/?x=1', '/revoke/?x=[redacted]'],
  ])('%s is logged as %s', (url, logged) => {
    expect(loggableUrl(url)).toBe(logged);
  });

  test.each(['/v1/orders?limit=5&status=draft', '/v1/orders', '/v1/orders?cursor=abc&catalogItemId=x', '/authorized?x=1', '/v1/me?%E0%A4%A=1'])('%s is logged as sent', (url) => {
    expect(loggableUrl(url)).toBe(url);
  });
});

describe('accessLogLevel: probes stay out of the info log, and an unready answer is no server error', () => {
  test.each([
    ['/healthz', 200, 'debug'],
    ['/metrics', 200, 'debug'],
    ['/readyz', 200, 'debug'],
    ['/readyz', 503, 'warn'],
    ['/metrics', 500, 'error'],
    ['/v1/orders', 200, 'info'],
    ['/v1/orders', 401, 'info'],
    ['/v1/orders', 503, 'error'],
    ['/v1/orders', 500, 'error'],
    ['/readyz/', 404, 'info'],
  ] as const)('%s answered %i is logged at %s', (path, status, level) => {
    expect(accessLogLevel(path, status)).toBe(level);
  });
});
