import { describe, expect, test } from 'vitest';
import { isAllowedOrigin, requestBase, sameResource } from './loopback.js';

describe('a loopback base URL answers under its loopback alias', () => {
  test('a request naming another loopback host on the same port is served as that host; anything else as the base', () => {
    expect(requestBase('http://localhost:8080', '127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
    // The SDK accepts an http issuer on localhost and 127.0.0.1 only.
    expect(requestBase('http://localhost:8080', '[::1]:8080')).toBe('http://localhost:8080');
    expect(requestBase('http://127.0.0.1:8080', 'localhost:8080')).toBe('http://localhost:8080');
    expect(requestBase('http://localhost:8080', 'localhost:8080')).toBe('http://localhost:8080');
    expect(requestBase('http://localhost:8080', '127.0.0.1:9090')).toBe('http://localhost:8080');
    expect(requestBase('http://localhost:8080', 'evil.example.com:8080')).toBe('http://localhost:8080');
    expect(requestBase('http://localhost:8080', 'bad host')).toBe('http://localhost:8080');
    expect(requestBase('http://localhost:8080', undefined)).toBe('http://localhost:8080');
    expect(requestBase('https://api.example.com', '127.0.0.1:443')).toBe('https://api.example.com');
  });

  test('resource indicators: equal (fragment and trailing slash aside), or loopback aliases of one another', () => {
    expect(sameResource('https://api.example.com/mcp', 'https://api.example.com/mcp/')).toBe(true);
    expect(sameResource('https://api.example.com/mcp#x', 'https://api.example.com/mcp')).toBe(true);
    expect(sameResource('http://127.0.0.1:8080/mcp', 'http://localhost:8080/mcp')).toBe(true);
    expect(sameResource('http://[::1]:8080/mcp', 'http://localhost:8080/mcp/')).toBe(true);
    expect(sameResource('http://127.0.0.1:8081/mcp', 'http://localhost:8080/mcp')).toBe(false);
    expect(sameResource('http://127.0.0.1:8080/other', 'http://localhost:8080/mcp')).toBe(false);
    expect(sameResource('https://evil.example.com/mcp', 'https://api.example.com/mcp')).toBe(false);
    expect(sameResource('not a url', 'http://localhost:8080/mcp')).toBe(false);
  });

  test('a browser page may call /mcp only from the base origin or, on loopback, an alias of it', () => {
    expect(isAllowedOrigin('https://api.example.com', 'https://api.example.com')).toBe(true);
    expect(isAllowedOrigin('http://evil.example.com', 'https://api.example.com')).toBe(false);
    expect(isAllowedOrigin('http://api.example.com', 'https://api.example.com')).toBe(false);
    expect(isAllowedOrigin('http://127.0.0.1:8080', 'http://localhost:8080')).toBe(true);
    expect(isAllowedOrigin('http://localhost:6274', 'http://localhost:8080')).toBe(false);
    expect(isAllowedOrigin('http://evil.example.com:8080', 'http://localhost:8080')).toBe(false);
    expect(isAllowedOrigin('null', 'http://localhost:8080')).toBe(false);
  });
});
