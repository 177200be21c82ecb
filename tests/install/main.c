/* Consumer of an installed tenbin: public headers, generated config, library. */
#include <stdio.h>

#include <tenbin.h>
#include <tenbin/config.h>

int main(void)
{
    const char *msg = tb_strerror(TB_ERR_NOMEM);
    if (msg == NULL || msg[0] == '\0') {
        fprintf(stderr, "consumer: tb_strerror returned nothing\n");
        return 1;
    }
    printf("tenbin %s (%s): TB_ERR_NOMEM -> %s\n", TENBIN_VERSION, TENBIN_MPI_FLAVOUR, msg);
    return 0;
}
