import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// The schemas that validate requests also describe them in /openapi.json.
extendZodWithOpenApi(z);

export { z };
