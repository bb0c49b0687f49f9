import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { v1Operations } from '../../src/api/v1/operations.js';
import { issuableScopes } from '../../src/keys/scopes.js';
import { createApiTestBed, type ApiTestBed } from '../support/apiTestBed.js';

const chromiumPath = '/usr/bin/chromium';
const inCi = process.env.CI === 'true' || process.env.CI === '1';
const haveChromium = existsSync(chromiumPath);
if (!haveChromium && inCi) throw new Error(`CI=true and ${chromiumPath} is missing: .ci/run installs it (apt-get install chromium)`);

describe.skipIf(!haveChromium)('the reference page in a real browser', () => {
  let bed: ApiTestBed;
  let key: string;
  let browser: BrowserContext;
  let profile: string;
  beforeAll(async () => {
    bed = await createApiTestBed({ tenants: 1 });
    const tenant = bed.tenants[0];
    if (!tenant) throw new Error('no tenant');
    key = await bed.issueKey(tenant, issuableScopes);
    profile = await mkdtemp(path.join(os.tmpdir(), 'supply-chromium-'));
    // A fresh profile each run (launchPersistentContext is how playwright takes --user-data-dir).
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    if (profile !== undefined) await rm(profile, { recursive: true, force: true });
    await bed?.close();
  });

  test('renders every operation from /openapi.json, loads nothing from another host, links nowhere outside, and a "try it" request with the typed key answers 200', async () => {
    const page = await browser.newPage();
    const foreign: string[] = [];
    const problems: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(bed.baseUrl) && !request.url().startsWith('data:') && !request.url().startsWith('blob:')) foreign.push(request.url());
    });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(`${bed.baseUrl}/docs`);
    await page.getByText('List orders').first().waitFor({ timeout: 30_000 });
    const text = await page.locator('body').innerText();
    for (const operation of v1Operations) expect(text, operation.operationId).toContain(operation.summary);
    // No link or button leads to another site: links stay on this origin (or write to support).
    const hrefs = await page.$$eval('a[href]', (anchors) => anchors.map((anchor) => (anchor as unknown as { href: string }).href));
    expect(hrefs.length).toBeGreaterThan(0);
    expect(hrefs.filter((href) => !href.startsWith(`${bed.baseUrl}/`) && !href.startsWith('mailto:'))).toEqual([]);
    const formTargets = await page.$$eval('form[action]', (forms, origin) => forms.map((form) => (form as unknown as { action: string }).action).filter((action) => !action.startsWith(origin)), bed.baseUrl);
    expect(formTargets).toEqual([]);

    await page.getByRole('button', { name: /authorize/i }).first().click();
    await page.locator('.dialog-ux input[type="text"], .dialog-ux input[type="password"]').first().fill(key);
    await page.locator('.dialog-ux .auth-btn-wrapper button.authorize').first().click();
    await page.locator('.dialog-ux .auth-btn-wrapper button.btn-done').first().click();
    await page.getByText('Identity of the API key').first().click();
    await page.getByRole('button', { name: /try it out/i }).first().click();
    const answered = page.waitForResponse((response) => new URL(response.url()).pathname === '/v1/me', { timeout: 30_000 });
    await page.getByRole('button', { name: /^execute$/i }).first().click();
    const response = await answered;
    expect(response.status()).toBe(200);
    expect(response.request().headers().authorization).toBe(`Bearer ${key}`);
    await page.locator('.live-responses-table .response-col_status').filter({ hasText: '200' }).first().waitFor({ timeout: 10_000 });
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });
});
