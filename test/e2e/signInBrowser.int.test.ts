import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { chromiumAvailable, launchChromium, type HeadlessChromium } from '../support/chromium.js';
import { services } from '../support/services.js';
import { startServedService, type ServedService } from '../support/servedService.js';

/** The assistant app's end of the redirect: a server on another origin that records what reached it. */
async function startCallbackServer(): Promise<{ origin: string; reached: URL[]; close(): Promise<void> }> {
  const reached: URL[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    reached.push(url);
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Back in the app</title><p>Back in the app.</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  return {
    origin: `http://127.0.0.1:${address.port}`,
    reached,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const base64url = (bytes: Buffer) => bytes.toString('base64url');

/**
 * The sign-in of an assistant app in Chromium, end to end: the app registers (dynamic client
 * registration) with a redirect URI on another origin, sends the browser to `/authorize` with
 * PKCE, the member types a sign-in code from the console and presses a button, and the browser
 * arrives back at the app with the code (or the refusal) and the app's `state`. Against the real
 * `serve`, so the page carries the headers production sends.
 */
describe.runIf(services.postgres && chromiumAvailable())('signing in to /mcp in Chromium, the app on another origin', () => {
  let service: ServedService;
  let callback: Awaited<ReturnType<typeof startCallbackServer>>;
  let browser: HeadlessChromium;
  let issuer: string;
  let clientId: string;
  let redirectUri: string;

  beforeAll(async () => {
    [service, callback, browser] = await Promise.all([startServedService(), startCallbackServer(), launchChromium()]);
    // The service's issuer is http://localhost:PORT; the app listens on 127.0.0.1, another origin.
    issuer = `http://localhost:${service.port}`;
    redirectUri = `${callback.origin}/oauth/callback`;
    const registered = await fetch(`${issuer}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Browser Test App', redirect_uris: [redirectUri], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }),
    });
    expect(registered.status, await registered.clone().text()).toBe(201);
    clientId = z.object({ client_id: z.string() }).parse(await registered.json()).client_id;
  });
  afterAll(async () => {
    await browser?.close();
    await callback?.close();
    await service?.stop();
  });

  async function signInCode(): Promise<string> {
    return z.object({ signInCode: z.string() }).parse(await service.cliJson(['console', 'sign-in-code', '--workspace', service.workspaceId, '--member', service.ownerId])).signInCode;
  }

  function authorization(): { url: string; state: string; verifier: string } {
    const verifier = base64url(randomBytes(32));
    const state = base64url(randomBytes(16));
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: base64url(createHash('sha256').update(verifier).digest()),
      code_challenge_method: 'S256',
      state,
      scope: 'orders:read analytics:read',
      resource: `${issuer}/mcp`,
    });
    return { url: `${issuer}/authorize?${query.toString()}`, state, verifier };
  }

  /** Opens the page; `blocked` lists what the browser refused (CSP reports and errors on the console). */
  async function open(url: string): Promise<{ page: Page; blocked: string[] }> {
    const page = await browser.context.newPage();
    const blocked: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') blocked.push(message.text());
    });
    const answer = await page.goto(url);
    expect(answer?.status()).toBe(200);
    await expect(page.getByRole('heading', { name: /Browser Test App/ }).isVisible()).resolves.toBe(true);
    return { page, blocked };
  }

  /** Waits until the browser has arrived back at the app, and answers the address it arrived at. */
  async function arrival(page: Page, blocked: string[]): Promise<URL> {
    await page.waitForURL((url) => url.href.startsWith(redirectUri), { timeout: 20_000 }).catch((error: unknown) => {
      throw new Error(`the browser stayed at ${page.url()}; it reported: ${blocked.join(' | ') || 'nothing'}`, { cause: error });
    });
    await page.getByText('Back in the app.').waitFor();
    const arrived = new URL(page.url());
    expect(callback.reached.map((url) => url.search)).toContain(arrived.search);
    return arrived;
  }

  test('allow: the browser arrives at redirect_uri with a code and the state, and the code buys tokens', async () => {
    const { url, state, verifier } = authorization();
    const { page, blocked } = await open(url);
    await page.getByLabel('Sign-in code').fill(await signInCode());
    await page.getByRole('button', { name: 'Sign in and allow' }).click();
    const arrived = await arrival(page, blocked);
    expect([...arrived.searchParams.keys()].sort()).toEqual(['code', 'state']);
    expect(arrived.searchParams.get('state')).toBe(state);
    const tokens = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: arrived.searchParams.get('code') ?? '', code_verifier: verifier, redirect_uri: redirectUri, client_id: clientId, resource: `${issuer}/mcp` }),
    });
    expect(tokens.status, await tokens.clone().text()).toBe(200);
    expect(await tokens.json()).toMatchObject({ token_type: 'Bearer', scope: 'orders:read analytics:read' });
    expect(blocked).toEqual([]);
    await page.close();
  });

  test('deny: the browser arrives at redirect_uri with error=access_denied and the state', async () => {
    const { url, state } = authorization();
    const { page, blocked } = await open(url);
    await page.getByRole('button', { name: 'Deny' }).click();
    const arrived = await arrival(page, blocked);
    expect(arrived.searchParams.get('error')).toBe('access_denied');
    expect(arrived.searchParams.get('state')).toBe(state);
    expect(arrived.searchParams.has('code')).toBe(false);
    expect(blocked).toEqual([]);
    await page.close();
  });

  test('a mistyped code shows the page again with the error; the right code then arrives at the app', async () => {
    const { url, state } = authorization();
    const { page, blocked } = await open(url);
    await page.getByLabel('Sign-in code').fill('AAAA-BBBB-CCCC');
    await page.getByRole('button', { name: 'Sign in and allow' }).click();
    await page.getByRole('alert').filter({ hasText: 'not valid' }).waitFor();
    await page.getByLabel('Sign-in code').fill(await signInCode());
    await page.getByRole('button', { name: 'Sign in and allow' }).click();
    const arrived = await arrival(page, blocked);
    expect(arrived.searchParams.get('state')).toBe(state);
    expect(arrived.searchParams.get('code')).toMatch(/./);
    // The 400 of the mistyped code is the one error the console saw.
    expect(blocked.filter((text) => !text.includes('400'))).toEqual([]);
    await page.close();
  });
});
