import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// Adds `.openapi()` to every zod schema, including those created before this module ran.
extendZodWithOpenApi(z);

export { z };
