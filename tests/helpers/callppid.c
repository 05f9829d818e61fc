/* callppid: prints getppid(), for the RTLD_NEXT test with nextprobe. */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    printf("ppid %d\n", (int)getppid());
    return 0;
}
