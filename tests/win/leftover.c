/* leftover: what a finished training leaves on Windows, a Python that stays
 * open. Built as python.exe; prints its pid, then waits to be ended (by
 * taskkill, as vram doctor says) or for its input to close, which it
 * tells by exiting with 3. */
#include <windows.h>

#include <stdio.h>

int main(void)
{
    printf("%lu\n", (unsigned long)GetCurrentProcessId());
    fflush(stdout);
    char buf[64];
    DWORD got;
    while (ReadFile(GetStdHandle(STD_INPUT_HANDLE), buf, sizeof buf, &got, NULL) && got)
        ;
    return 3;
}
