import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { expect } from 'vitest';

export const testRedirectUrl = 'http://127.0.0.1:9/oauth/callback';

/**
 * The SDK's OAuth client provider interface, kept in memory: what an assistant app stores (its
 * registration, tokens, PKCE verifier) and where it would send the person to sign in.
 */
export class MemoryOAuthProvider implements OAuthClientProvider {
  /**
   * The registration of the default test client, shared by the providers of one test file as one
   * installed app keeps its registration: the server limits registrations per address (20 an hour).
   */
  private static sharedRegistration: OAuthClientInformationMixed | undefined;

  authorizationUrl: URL | undefined;
  private client: OAuthClientInformationMixed | undefined;
  private stored: OAuthTokens | undefined;
  private verifier: string | undefined;
  private readonly shared: boolean;

  /** Custom metadata always registers a client of its own. */
  constructor(private readonly metadata: Partial<OAuthClientMetadata> = {}) {
    this.shared = Object.keys(metadata).length === 0;
    if (this.shared) this.client = MemoryOAuthProvider.sharedRegistration;
  }

  get redirectUrl(): string {
    return testRedirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test Assistant',
      redirect_uris: [testRedirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...this.metadata,
    };
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.client;
  }

  saveClientInformation(information: OAuthClientInformationMixed): void {
    this.client = information;
    if (this.shared) MemoryOAuthProvider.sharedRegistration = information;
  }

  tokens(): OAuthTokens | undefined {
    return this.stored;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.stored = tokens;
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.authorizationUrl = authorizationUrl;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error('no PKCE verifier saved');
    return this.verifier;
  }
}

export function mcpTransport(baseUrl: string, provider: OAuthClientProvider): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), { authProvider: provider });
}

export function newClient(): Client {
  return new Client({ name: 'supply-api-tests', version: '1.0.0' });
}

/** Submits the sign-in form of an authorization URL; the answer is not followed. */
export function submitSignInCode(authorizationUrl: URL, signInCode: string): Promise<Response> {
  return fetch(authorizationUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ signInCode }).toString(),
    redirect: 'manual',
  });
}

/**
 * The whole sign-in as an assistant app does it: connect (401), discovery and registration by the
 * SDK, the sign-in page with a code from the console, the code exchange; answers a connected client.
 */
export async function signIn(
  baseUrl: string,
  signInCode: () => Promise<string>,
  options: { provider?: MemoryOAuthProvider } = {},
): Promise<{ client: Client; provider: MemoryOAuthProvider }> {
  const provider = options.provider ?? new MemoryOAuthProvider();
  const first = mcpTransport(baseUrl, provider);
  await expect(newClient().connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
  const authorizationUrl = provider.authorizationUrl;
  if (authorizationUrl === undefined) throw new Error('the SDK did not start the authorization');
  const page = await fetch(authorizationUrl);
  expect(page.status).toBe(200);
  const answer = await submitSignInCode(authorizationUrl, await signInCode());
  expect(answer.status, await answer.clone().text()).toBe(302);
  const location = new URL(answer.headers.get('location') ?? '');
  expect(`${location.origin}${location.pathname}`).toBe(testRedirectUrl);
  expect(location.searchParams.get('state')).toBe(authorizationUrl.searchParams.get('state'));
  const code = location.searchParams.get('code');
  if (code === null) throw new Error(`no code in ${location.href}`);
  await first.finishAuth(code);
  const client = newClient();
  await client.connect(mcpTransport(baseUrl, provider));
  return { client, provider };
}
