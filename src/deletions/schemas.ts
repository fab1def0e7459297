import { z } from '../http/zod';

export const deletionAccepted = z
  .object({ deletion_id: z.number().int(), message: z.string() })
  .openapi('DeletionAccepted');

export const deletionStatusResponse = z
  .object({
    deletion_id: z.number().int(),
    status: z.enum(['PENDING', 'SUCCESS', 'FAILURE']),
    message: z.string(),
  })
  .openapi('DeletionStatus');
